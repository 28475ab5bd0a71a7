/* Decodes one rectangle of a JPEG with the libjpeg API of libjpeg-turbo.
 *
 * Only the work the rectangle needs is done: rows above it are skipped without IDCT, upsampling or
 * colour conversion (jpeg_skip_scanlines), columns outside it are not transformed
 * (jpeg_crop_scanline), and decoding stops after its last row. The pixels equal those of a full
 * decode (accurate integer IDCT, fancy upsampling) cropped to the rectangle: libjpeg-turbo treats
 * the edges of a cropped or skipped region as image edges when it upsamples chroma, so a margin
 * around the rectangle is decoded too and then dropped.
 *
 * decode_region(data, out, top, left, height, width, scale_denom, whole=False)
 *     -> (row_width, x_offset, warnings) | None
 *   data: the JPEG file (bytes-like). The rectangle is in the coordinates of the image decoded at
 *   1/scale_denom (1, 2, 4 or 8). out: a writable buffer of at least
 *   height * (width + EXTRA_COLUMNS) * 3 bytes. The decoded rows, row_width pixels each (the
 *   rectangle plus margins, at most width + EXTRA_COLUMNS), are written to it back to back as RGB;
 *   the rectangle starts x_offset pixels into each row. Writing the rows straight into out, several
 *   at a time, saves a copy and libjpeg's one-row spare buffer. warnings: how many libjpeg warnings
 *   were ignored.
 *   Returns None, writing nothing meaningful, for JPEGs this module does not handle (not
 *   3-component YCbCr with 1x1 chroma and luma sampling 1 or 2 per axis).
 *   Raises Error for corrupt or truncated data: a JPEG without an EOI marker after its scan data
 *   is an error even when the rectangle lies above the missing part; entropy-coded data that ends
 *   early (libjpeg's "premature end of data segment", typically a cut file with an EOI appended)
 *   is an error when the decoder reaches it, which is always when whole is true: then the rows
 *   below the rectangle are entropy-decoded too (without IDCT), and the file is read to its EOI.
 *   Without whole, a cut below the rectangle goes unseen: the pixels returned are still exact.
 *   Other libjpeg warnings (corrupt entropy data, extraneous bytes) are ignored, as a lenient full
 *   decode ignores them. HAS_WHOLE (a module constant) says this build takes whole.
 *   Also None for a progressive JPEG whose scans leave some of the first ten coefficients of a
 *   component unsent or unrefined (a file cut between scans, with an EOI after the cut): libjpeg
 *   then smooths blocks (do_block_smoothing), and how it smooths changed between libjpeg-turbo
 *   releases (2.1.5 and 3.1.2 differ by up to 3 levels), so the caller's full decode, with the one
 *   library it uses, decodes such files. CHECKS_SMOOTHING (a module constant) says this build
 *   does this; LIBJPEG_TURBO_VERSION_NUMBER is the version of the headers it was built with.
 *   The GIL is released while decoding.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

/* jpeg_crop_scanline and jpeg_skip_scanlines came in libjpeg-turbo 1.5 and later releases fixed
 * bugs in them; the exactness tests were run against 2.1.5. With an older libjpeg-turbo or another
 * libjpeg the build stops here, and setup.py (optional=True) leaves the extension out. */
#if !defined(LIBJPEG_TURBO_VERSION_NUMBER) || LIBJPEG_TURBO_VERSION_NUMBER < 2001000
#error "headrace._native._jpegregion needs libjpeg-turbo >= 2.1"
#endif

static PyObject *RegionError;

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} error_mgr;

static void on_error(j_common_ptr cinfo)
{
    error_mgr *err = (error_mgr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
}

static void on_message(j_common_ptr cinfo, int level)
{
    if (level < 0) {
        /* Data that ends early: no EOI (JWRN_JPEG_EOF), or a marker (typically an EOI appended to a
         * cut file) where entropy-coded data should continue (JWRN_HIT_MARKER). libjpeg would fill
         * the rest with grey; this module fails instead and the caller decodes the whole image,
         * which reports it (a warning or, in strict mode, an error). */
        if (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER)
            on_error(cinfo);
        cinfo->err->num_warnings++;      /* other warnings: decode leniently */
    }
}

static void on_output(j_common_ptr cinfo)
{
    (void)cinfo;                         /* never print */
}

enum { DONE = 0, UNSUPPORTED = 1, FAILED = 2, BAD_BOX = 3 };

/* 1 when the decoder will smooth blocks: a progressive JPEG (all its scans read, as
 * jpeg_start_decompress reads them) with one of the first ten coefficients of a component never
 * sent (coef_bits -1) or not refined to its last bit (coef_bits > 0). The test is that of
 * libjpeg-turbo's smoothing_ok() (jdcoefct.c) without its quantisation-table conditions, so it
 * errs towards a full decode. */
static int smoothed(j_decompress_ptr cinfo)
{
    int c, k;
    if (!cinfo->progressive_mode || cinfo->coef_bits == NULL || !cinfo->do_block_smoothing)
        return 0;
    for (c = 0; c < cinfo->num_components; c++)
        for (k = 0; k < 10; k++)
            if (cinfo->coef_bits[c][k] != 0)
                return 1;
    return 0;
}

/* 1 when an EOI marker (FF D9) lies in data[from:len]. Entropy-coded data never holds FF D9
 * (an FF there is followed by 00 or a restart marker), so this says whether the scan data ends. */
static int has_eoi(const unsigned char *data, size_t from, size_t len)
{
    size_t i;
    for (i = len; i >= from + 2; i--)
        if (data[i - 1] == 0xD9 && data[i - 2] == 0xFF)
            return 1;
    return 0;
}

static int supported(j_decompress_ptr cinfo)
{
    jpeg_component_info *c = cinfo->comp_info;
    if (cinfo->num_components != 3 || cinfo->jpeg_color_space != JCS_YCbCr)
        return 0;
    if (c[1].h_samp_factor != 1 || c[1].v_samp_factor != 1 ||
        c[2].h_samp_factor != 1 || c[2].v_samp_factor != 1)
        return 0;
    return c[0].h_samp_factor >= 1 && c[0].h_samp_factor <= 2 &&
           c[0].v_samp_factor >= 1 && c[0].v_samp_factor <= 2;
}

/* Columns beyond the rectangle a decoded row may hold: the margin (<= 2 * 2 on each side) plus
 * the move of the left edge to an iMCU boundary (< 16 pixels). */
#define EXTRA_COLUMNS 32
#define ROWS_PER_CALL 16

typedef struct {
    const unsigned char *data;
    size_t len, out_len;
    unsigned char *out;
    int top, left, height, width, denom, whole;
    int row_width, x_offset, warnings;   /* results */
    char message[JMSG_LENGTH_MAX];
} job;

static int run(job *jb)
{
    struct jpeg_decompress_struct cinfo;
    error_mgr err;
    JSAMPROW rows[ROWS_PER_CALL];
    JDIMENSION x0, cw, end, n, i;
    int x1, margin, status;
    size_t pos, stride;
    unsigned char *volatile spare = NULL;         /* freed after a longjmp too */

    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = on_error;
    err.pub.emit_message = on_message;
    err.pub.output_message = on_output;
    err.message[0] = '\0';
    if (setjmp(err.jump)) {
        snprintf(jb->message, sizeof jb->message, "%s", err.message);
        jpeg_destroy_decompress(&cinfo);
        free(spare);
        return FAILED;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, jb->data, (unsigned long)jb->len);
    jpeg_read_header(&cinfo, TRUE);
    if (!supported(&cinfo)) {
        jpeg_destroy_decompress(&cinfo);
        return UNSUPPORTED;
    }
    pos = jb->len - cinfo.src->bytes_in_buffer;     /* start of the first scan's data */
    if (!has_eoi(jb->data, pos, jb->len)) {
        snprintf(jb->message, sizeof jb->message, "Premature end of JPEG file (no EOI marker)");
        jpeg_destroy_decompress(&cinfo);
        return FAILED;
    }
    cinfo.out_color_space = JCS_RGB;
    cinfo.dct_method = JDCT_ISLOW;
    cinfo.do_fancy_upsampling = TRUE;
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned int)jb->denom;
    jpeg_start_decompress(&cinfo);
    if (smoothed(&cinfo)) {
        jpeg_destroy_decompress(&cinfo);
        return UNSUPPORTED;
    }
    if (jb->top < 0 || jb->left < 0 || jb->height < 1 || jb->width < 1 ||
        (JDIMENSION)(jb->top + jb->height) > cinfo.output_height ||
        (JDIMENSION)(jb->left + jb->width) > cinfo.output_width) {
        snprintf(jb->message, sizeof jb->message, "box (%d, %d, %d, %d) is outside the %ux%u image",
                 jb->top, jb->left, jb->height, jb->width, cinfo.output_height, cinfo.output_width);
        jpeg_destroy_decompress(&cinfo);
        return BAD_BOX;
    }
    /* Upsampling a chroma sample reads its neighbours, so the pixels next to a cropped edge come
     * out as if the image ended there: the right edge needs one chroma sample (max_h_samp_factor
     * pixels) of margin, the left edge too when the iMCU boundary is that close. Twice that is
     * used. Skipped rows need none: jpeg_skip_scanlines decodes the context rows the upsampler
     * needs (tests compare every case with a full decode). */
    margin = 2 * cinfo.max_h_samp_factor;
    x0 = (JDIMENSION)(jb->left > margin ? jb->left - margin : 0);
    x1 = jb->left + jb->width + margin;
    if ((JDIMENSION)x1 > cinfo.output_width)
        x1 = (int)cinfo.output_width;
    cw = (JDIMENSION)x1 - x0;
    if (cw < cinfo.output_width)
        jpeg_crop_scanline(&cinfo, &x0, &cw);       /* moves x0 left to an iMCU boundary */
    else
        x0 = 0;
    stride = (size_t)cinfo.output_width * 3;
    if (cinfo.output_width > (JDIMENSION)(jb->width + EXTRA_COLUMNS) ||
        (size_t)jb->height * stride > jb->out_len) {
        snprintf(jb->message, sizeof jb->message, "decoded rows of %u pixels do not fit in out",
                 cinfo.output_width);
        jpeg_destroy_decompress(&cinfo);
        return BAD_BOX;
    }
    if (jb->top > 0)
        jpeg_skip_scanlines(&cinfo, (JDIMENSION)jb->top);
    end = (JDIMENSION)(jb->top + jb->height);
    while (cinfo.output_scanline < end) {
        n = end - cinfo.output_scanline;
        if (n > ROWS_PER_CALL)
            n = ROWS_PER_CALL;
        for (i = 0; i < n; i++)
            rows[i] = jb->out + (size_t)(cinfo.output_scanline - (JDIMENSION)jb->top + i) * stride;
        if (jpeg_read_scanlines(&cinfo, rows, n) == 0)
            break;                                  /* cannot happen with an in-memory source */
    }
    if (jb->whole && cinfo.output_scanline < cinfo.output_height) {
        /* Entropy-decode the rows below the rectangle too (no IDCT for all but the last), so that
         * data ending early anywhere is seen. Skipping to the very end would read nothing (libjpeg
         * just marks the rows done), hence the last row is read into a spare row. */
        if (cinfo.output_height - cinfo.output_scanline > 1)
            jpeg_skip_scanlines(&cinfo, cinfo.output_height - cinfo.output_scanline - 1);
        spare = malloc(stride);
        if (spare == NULL) {
            snprintf(jb->message, sizeof jb->message, "out of memory");
            jpeg_destroy_decompress(&cinfo);
            return FAILED;
        }
        rows[0] = spare;
        jpeg_read_scanlines(&cinfo, rows, 1);
        jpeg_finish_decompress(&cinfo);            /* reads the markers up to EOI */
        free(spare);
        spare = NULL;
    }
    jb->row_width = (int)cinfo.output_width;
    jb->x_offset = jb->left - (int)x0;
    jb->warnings = (int)err.pub.num_warnings;
    status = DONE;
    jpeg_destroy_decompress(&cinfo);                /* also aborts: the rows below are not read */
    return status;
}

static PyObject *decode_region(PyObject *self, PyObject *args)
{
    Py_buffer src, dst;
    job jb;
    int status;

    (void)self;
    jb.whole = 0;
    if (!PyArg_ParseTuple(args, "y*w*iiiii|p:decode_region", &src, &dst, &jb.top, &jb.left,
                          &jb.height, &jb.width, &jb.denom, &jb.whole))
        return NULL;
    if (jb.denom != 1 && jb.denom != 2 && jb.denom != 4 && jb.denom != 8) {
        PyErr_Format(PyExc_ValueError, "scale_denom must be 1, 2, 4 or 8, but got %d.", jb.denom);
        goto fail;
    }
    if (jb.height < 1 || jb.width < 1 ||
        dst.len < (Py_ssize_t)jb.height * (jb.width + EXTRA_COLUMNS) * 3) {
        PyErr_Format(PyExc_ValueError, "out must hold height * (width + %d) * 3 = %zd bytes, but "
                     "holds %zd.", EXTRA_COLUMNS,
                     (Py_ssize_t)jb.height * (jb.width + EXTRA_COLUMNS) * 3, dst.len);
        goto fail;
    }
    jb.data = (const unsigned char *)src.buf;
    jb.len = (size_t)src.len;
    jb.out = (unsigned char *)dst.buf;
    jb.out_len = (size_t)dst.len;
    jb.message[0] = '\0';
    Py_BEGIN_ALLOW_THREADS
    status = run(&jb);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    switch (status) {
    case DONE:
        return Py_BuildValue("(iii)", jb.row_width, jb.x_offset, jb.warnings);
    case UNSUPPORTED:
        Py_RETURN_NONE;
    case BAD_BOX:
        PyErr_SetString(PyExc_ValueError, jb.message);
        return NULL;
    default:
        PyErr_SetString(RegionError, jb.message);
        return NULL;
    }
fail:
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    return NULL;
}

static PyMethodDef methods[] = {
    {"decode_region", decode_region, METH_VARARGS,
     "decode_region(data, out, top, left, height, width, scale_denom)\n"
     "    -> (row_width, x_offset, warnings)\n\n"
     "Decodes the rows of a JPEG's rectangle (at 1/scale_denom scale) into out as RGB, row_width\n"
     "pixels each, the rectangle starting at x_offset; warnings counts the libjpeg warnings it\n"
     "ignored. None for JPEGs it does not handle; raises\n"
     "Error for corrupt or truncated data. out holds height * (width + EXTRA_COLUMNS) * 3 bytes."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_jpegregion",
    "Decoding one rectangle of a JPEG with libjpeg-turbo (crop + skip scanlines).", -1, methods,
    NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__jpegregion(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    RegionError = PyErr_NewException("headrace._native._jpegregion.Error", PyExc_RuntimeError, NULL);
    if (RegionError == NULL || PyModule_AddObject(m, "Error", RegionError) < 0) {
        Py_XDECREF(RegionError);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(RegionError);
    if (PyModule_AddIntConstant(m, "EXTRA_COLUMNS", EXTRA_COLUMNS) < 0 ||
        PyModule_AddIntConstant(m, "LIBJPEG_TURBO_VERSION_NUMBER", LIBJPEG_TURBO_VERSION_NUMBER) < 0 ||
        PyModule_AddIntConstant(m, "HAS_WHOLE", 1) < 0 ||
        PyModule_AddIntConstant(m, "CHECKS_SMOOTHING", 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
