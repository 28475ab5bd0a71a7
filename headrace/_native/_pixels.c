/* One pass over a uint8 HWC image into a float32 CHW array through a per-channel table.
 *
 * normalize_chw(src, lut, out, flip) -> None
 *   src: a C-contiguous uint8 buffer of h * w * c bytes (an <H, W, C> image);
 *   lut: a C-contiguous float32 buffer of c * 256 values (channel k's value of byte v at k * 256 + v);
 *   out: a writable C-contiguous float32 buffer of c * h * w values (<C, H, W>), not overlapping src;
 *   flip: -1 none, 1 mirrors each row (horizontal), 0 reverses the rows (vertical): OpenCV's codes.
 *   out[k, y, x] = lut[k, src[y', x', k]] with (y', x') the flipped position. The GIL is released
 *   while it runs.
 *
 * Normalize + HWC2CHW of a uint8 image is a table lookup per value (headrace/_image/convert.py
 * makes the table with the arithmetic of its own loop, so the result is that loop's to the bit).
 * Done with OpenCV it takes a split into planes, a flip of each plane and a LUT call per plane:
 * three passes over the pixels and five calls; this reads each pixel once, flipped or not.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

static void normalize_chw_run(const uint8_t *src, const float *lut, float *out, Py_ssize_t h,
                              Py_ssize_t w, Py_ssize_t c, int flip) {
    Py_ssize_t plane = h * w;
    for (Py_ssize_t y = 0; y < h; y++) {
        const uint8_t *row = src + (flip == 0 ? h - 1 - y : y) * w * c;
        float *o = out + y * w;
        if (c == 3) {
            const float *l0 = lut, *l1 = lut + 256, *l2 = lut + 512;
            float *o0 = o, *o1 = o + plane, *o2 = o + 2 * plane;
            if (flip == 1) {
                for (Py_ssize_t x = 0; x < w; x++) {
                    const uint8_t *p = row + (w - 1 - x) * 3;
                    o0[x] = l0[p[0]];
                    o1[x] = l1[p[1]];
                    o2[x] = l2[p[2]];
                }
            } else {
                for (Py_ssize_t x = 0; x < w; x++) {
                    const uint8_t *p = row + x * 3;
                    o0[x] = l0[p[0]];
                    o1[x] = l1[p[1]];
                    o2[x] = l2[p[2]];
                }
            }
            continue;
        }
        for (Py_ssize_t k = 0; k < c; k++) {
            const float *l = lut + k * 256;
            float *ok = o + k * plane;
            for (Py_ssize_t x = 0; x < w; x++) {
                ok[x] = l[row[(flip == 1 ? w - 1 - x : x) * c + k]];
            }
        }
    }
}

static PyObject *normalize_chw(PyObject *self, PyObject *args) {
    PyObject *src_obj, *lut_obj, *out_obj;
    int flip;
    Py_buffer src, lut, out;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOi", &src_obj, &lut_obj, &out_obj, &flip)) return NULL;
    if (flip < -1 || flip > 1) {
        PyErr_SetString(PyExc_ValueError, "flip must be -1 (none), 0 (vertical) or 1 (horizontal)");
        return NULL;
    }
    if (PyObject_GetBuffer(src_obj, &src, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_ND) < 0) return NULL;
    if (PyObject_GetBuffer(lut_obj, &lut, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_ND) < 0) {
        PyBuffer_Release(&src);
        return NULL;
    }
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_ND | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&src);
        PyBuffer_Release(&lut);
        return NULL;
    }
    const char *why = NULL;
    Py_ssize_t h = 0, w = 0, c = 0;
    if (src.ndim != 3 || src.itemsize != 1 || (src.format && strcmp(src.format, "B") != 0)) {
        why = "src must be a C-contiguous uint8 array of shape (h, w, c)";
    } else {
        h = src.shape[0], w = src.shape[1], c = src.shape[2];
        if (lut.itemsize != 4 || (lut.format && strcmp(lut.format, "f") != 0) || lut.len != c * 256 * 4) {
            why = "lut must be a C-contiguous float32 array of c * 256 values";
        } else if (out.itemsize != 4 || (out.format && strcmp(out.format, "f") != 0) || out.len != h * w * c * 4) {
            why = "out must be a C-contiguous float32 array of c * h * w values";
        } else {
            const char *s0 = src.buf, *o0 = out.buf;
            if (o0 < s0 + src.len && s0 < o0 + out.len) why = "out must not overlap src";
        }
    }
    if (why == NULL) {
        Py_BEGIN_ALLOW_THREADS
        normalize_chw_run(src.buf, lut.buf, out.buf, h, w, c, flip);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&src);
    PyBuffer_Release(&lut);
    PyBuffer_Release(&out);
    if (why != NULL) {
        PyErr_SetString(PyExc_ValueError, why);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"normalize_chw", normalize_chw, METH_VARARGS,
     "normalize_chw(src, lut, out, flip): out[k, y, x] = lut[k, src[y, x, k]] over the flipped image "
     "(flip -1 none, 0 vertical, 1 horizontal)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pixels", NULL, -1, methods};

PyMODINIT_FUNC PyInit__pixels(void) { return PyModule_Create(&module); }
