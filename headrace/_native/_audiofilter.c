/* The direct-form-I IIR recurrence in the signal's own precision (float32 or float64).
 *
 * A float32 recurrence with poles near the unit circle turns each rounding step into an error
 * that the poles carry on, so its output depends on the precision and the order of every
 * operation. MindSpore 2.10 runs it in the input's type, in this order, and headrace matches its
 * float32 output only by doing the same:
 *     b, a cast to the signal's type, then b[k] /= a[0] and a[k] /= a[0] (k >= 1) in that type;
 *     acc = 0; acc += b[k] * x[n - k] for k = 0..order; acc -= a[k] * y[n - k] for k = 1..order;
 *     y[n] = acc (the value fed back), the output clipped to [-1, 1] when clamp is set.
 * Samples before the start of a row are zeros that take part in the products (an infinite
 * coefficient gives NaN there, as it does in MindSpore). setup.py builds this with
 * -ffp-contract=off: a fused multiply-add would round differently.
 *
 * lfilter(x, y, n, b, a, clamp) -> None
 *   x: a C-contiguous buffer of float32 ('f') or float64 ('d') values, rows of n samples back to
 *   back; y: a writable C-contiguous buffer of the same type and size, receives the output (may not
 *   be x).
 *   b, a: sequences of the same length (>= 1) of floats. The GIL is released while filtering.
 *
 * The phase vocoder's float32 phases reach hundreds of radians, where one unit in the last place
 * of an angle moves the output by ~1e-5 of its peak, so its angles and its polar form come from the
 * C library's atan2f / cosf / sinf as MindSpore's do (NumPy's own float32 arctan2, cos and sin
 * differ from them in the last place for some inputs):
 * angle(z, out) -> None: out[i] = atan2(z[2i + 1], z[2i]) (z: pairs of real, imaginary parts).
 * polar(mag, phase, out) -> None: out[2i] = cos(phase[i]) * mag[i], out[2i + 1] = sin(phase[i]) * mag[i].
 *   All buffers C-contiguous, of one type (float32 or float64) and of matching sizes.
 *
 * MindSpore's STFT is a direct DFT summed term by term in the signal's precision; PitchShift's
 * phase vocoder carries one float32 step of a bin's value on into its output (~1e-4 of the peak),
 * so it takes the spectrum from the same sums:
 * dft(seg, cos, sin, out) -> None: for each row r of seg (rows of n samples) and bin i (rows of
 *   cos / sin, n values each): out[r, i] = (sum_k seg[r, k] * cos[i, k], sum_k -seg[r, k] * sin[i, k]),
 *   each sum from 0 in order of k; out holds rows x bins pairs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <string.h>

#define DEFINE_DF1(NAME, T)                                                                        \
    static void NAME(const T *x, T *y, Py_ssize_t rows, Py_ssize_t n, const double *bd,           \
                     const double *ad, Py_ssize_t len, int clamp, T *bw, T *aw, T *xh, T *yh) {    \
        for (Py_ssize_t k = 0; k < len; k++) {                                                     \
            bw[k] = (T)bd[k];                                                                      \
            aw[k] = (T)ad[k];                                                                      \
        }                                                                                          \
        for (Py_ssize_t k = 1; k < len; k++) aw[k] /= aw[0];                                       \
        for (Py_ssize_t k = 0; k < len; k++) bw[k] /= aw[0];                                       \
        for (Py_ssize_t r = 0; r < rows && len == 3; r++) {                                        \
            /* a biquad, its history in registers: the same operations in the same order */         \
            const T *xr = x + r * n;                                                               \
            T *yr = y + r * n;                                                                     \
            T b0 = bw[0], b1 = bw[1], b2 = bw[2], a1 = aw[1], a2 = aw[2];                          \
            T x1 = 0, x2 = 0, y1 = 0, y2 = 0;                                                      \
            for (Py_ssize_t i = 0; i < n; i++) {                                                   \
                T x0 = xr[i];                                                                      \
                T acc = (T)0;                                                                      \
                acc += b0 * x0;                                                                    \
                acc += b1 * x1;                                                                    \
                acc += b2 * x2;                                                                    \
                acc -= a1 * y1;                                                                    \
                acc -= a2 * y2;                                                                    \
                x2 = x1;                                                                           \
                x1 = x0;                                                                           \
                y2 = y1;                                                                           \
                y1 = acc;                                                                          \
                yr[i] = (clamp && acc > (T)1) ? (T)1 : (clamp && acc < (T)-1) ? (T)-1 : acc;       \
            }                                                                                      \
        }                                                                                          \
        for (Py_ssize_t r = 0; r < rows && len != 3; r++) {                                        \
            const T *xr = x + r * n;                                                               \
            T *yr = y + r * n;                                                                     \
            /* xh[k], yh[k]: x[i - k], y[i - k] (zeros before the row's start) */                  \
            for (Py_ssize_t k = 0; k < len; k++) xh[k] = yh[k] = (T)0;                             \
            for (Py_ssize_t i = 0; i < n; i++) {                                                   \
                for (Py_ssize_t k = len - 1; k > 0; k--) {                                         \
                    xh[k] = xh[k - 1];                                                             \
                    yh[k] = yh[k - 1];                                                             \
                }                                                                                  \
                xh[0] = xr[i];                                                                     \
                T acc = (T)0;                                                                      \
                for (Py_ssize_t k = 0; k < len; k++) acc += bw[k] * xh[k];                         \
                for (Py_ssize_t k = 1; k < len; k++) acc -= aw[k] * yh[k];                         \
                yh[0] = acc;                                                                       \
                yr[i] = (clamp && acc > (T)1) ? (T)1 : (clamp && acc < (T)-1) ? (T)-1 : acc;       \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_DF1(df1_float, float)
DEFINE_DF1(df1_double, double)

static int read_coeffs(PyObject *seq, const char *name, double **out, Py_ssize_t *len) {
    PyObject *fast = PySequence_Fast(seq, "coefficients must be a sequence");
    if (fast == NULL) return -1;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(fast);
    if (m < 1 || (*len >= 0 && m != *len)) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd coefficients (at least 1), got %zd", name,
                     *len, m);
        Py_DECREF(fast);
        return -1;
    }
    double *v = PyMem_Malloc(sizeof(double) * (size_t)m);
    if (v == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        v[k] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, k));
        if (v[k] == -1.0 && PyErr_Occurred()) {
            PyMem_Free(v);
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    *out = v;
    *len = m;
    return 0;
}

static char kind_of(const Py_buffer *view) {
    const char *f = view->format == NULL ? "B" : view->format;
    if (f[0] == '=' || f[0] == '<' || f[0] == '@') f++;
    if (f[0] == 'f' && f[1] == '\0' && view->itemsize == 4) return 'f';
    if (f[0] == 'd' && f[1] == '\0' && view->itemsize == 8) return 'd';
    return '\0';
}

static PyObject *lfilter(PyObject *self, PyObject *args) {
    Py_buffer xv, yv;
    Py_ssize_t n;
    PyObject *xo, *yo, *bseq, *aseq;
    int clamp;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOnOOp", &xo, &yo, &n, &bseq, &aseq, &clamp)) return NULL;
    if (PyObject_GetBuffer(xo, &xv, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(yo, &yv, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    PyObject *result = NULL;
    double *bd = NULL, *ad = NULL;
    void *work = NULL;
    char kind = kind_of(&xv);
    Py_ssize_t len = -1;
    if (kind == '\0' || kind_of(&yv) != kind || xv.len != yv.len) {
        PyErr_SetString(PyExc_TypeError, "x and y must be float32 or float64 buffers of one type and size");
        goto done;
    }
    if (xv.buf == yv.buf) {
        PyErr_SetString(PyExc_ValueError, "x and y must be distinct buffers");
        goto done;
    }
    Py_ssize_t total = xv.len / xv.itemsize;
    if (n <= 0 || total % n != 0) {
        PyErr_Format(PyExc_ValueError, "n must divide the %zd samples, got %zd", total, n);
        goto done;
    }
    if (read_coeffs(bseq, "b", &bd, &len) < 0 || read_coeffs(aseq, "a", &ad, &len) < 0) goto done;
    work = PyMem_Malloc((size_t)xv.itemsize * 4 * (size_t)len);
    if (work == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (kind == 'f') {
        float *w = work;
        df1_float(xv.buf, yv.buf, total / n, n, bd, ad, len, clamp, w, w + len, w + 2 * len, w + 3 * len);
    } else {
        double *w = work;
        df1_double(xv.buf, yv.buf, total / n, n, bd, ad, len, clamp, w, w + len, w + 2 * len, w + 3 * len);
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(work);
    PyMem_Free(bd);
    PyMem_Free(ad);
    PyBuffer_Release(&xv);
    PyBuffer_Release(&yv);
    return result;
}

static int get_views(PyObject **objs, Py_buffer *views, int count, int writable_last) {
    for (int i = 0; i < count; i++) {
        int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | ((writable_last && i == count - 1) ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objs[i], &views[i], flags) < 0) {
            for (int j = 0; j < i; j++) PyBuffer_Release(&views[j]);
            return -1;
        }
    }
    char kind = kind_of(&views[0]);
    for (int i = 1; i < count && kind != '\0'; i++)
        if (kind_of(&views[i]) != kind) kind = '\0';
    if (kind == '\0') {
        for (int j = 0; j < count; j++) PyBuffer_Release(&views[j]);
        PyErr_SetString(PyExc_TypeError, "buffers must be float32 or float64, all of one type");
        return -1;
    }
    return kind;
}

static PyObject *angle(PyObject *self, PyObject *args) {
    PyObject *objs[2];
    Py_buffer v[2];
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &objs[0], &objs[1])) return NULL;
    int kind = get_views(objs, v, 2, 1);
    if (kind < 0) return NULL;
    if (v[0].len != 2 * v[1].len) {
        PyBuffer_Release(&v[0]);
        PyBuffer_Release(&v[1]);
        PyErr_SetString(PyExc_ValueError, "z must hold two values per output value");
        return NULL;
    }
    Py_ssize_t m = v[1].len / v[1].itemsize;
    Py_BEGIN_ALLOW_THREADS
    if (kind == 'f') {
        const float *z = v[0].buf;
        float *o = v[1].buf;
        for (Py_ssize_t i = 0; i < m; i++) o[i] = atan2f(z[2 * i + 1], z[2 * i]);
    } else {
        const double *z = v[0].buf;
        double *o = v[1].buf;
        for (Py_ssize_t i = 0; i < m; i++) o[i] = atan2(z[2 * i + 1], z[2 * i]);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v[0]);
    PyBuffer_Release(&v[1]);
    Py_RETURN_NONE;
}

static PyObject *polar(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    Py_buffer v[3];
    (void)self;
    if (!PyArg_ParseTuple(args, "OOO", &objs[0], &objs[1], &objs[2])) return NULL;
    int kind = get_views(objs, v, 3, 1);
    if (kind < 0) return NULL;
    if (v[0].len != v[1].len || v[2].len != 2 * v[0].len) {
        for (int j = 0; j < 3; j++) PyBuffer_Release(&v[j]);
        PyErr_SetString(PyExc_ValueError, "mag and phase must be of one size, out twice that");
        return NULL;
    }
    Py_ssize_t m = v[0].len / v[0].itemsize;
    Py_BEGIN_ALLOW_THREADS
    if (kind == 'f') {
        const float *mag = v[0].buf, *ph = v[1].buf;
        float *o = v[2].buf;
        for (Py_ssize_t i = 0; i < m; i++) {
            o[2 * i] = cosf(ph[i]) * mag[i];
            o[2 * i + 1] = sinf(ph[i]) * mag[i];
        }
    } else {
        const double *mag = v[0].buf, *ph = v[1].buf;
        double *o = v[2].buf;
        for (Py_ssize_t i = 0; i < m; i++) {
            o[2 * i] = cos(ph[i]) * mag[i];
            o[2 * i + 1] = sin(ph[i]) * mag[i];
        }
    }
    Py_END_ALLOW_THREADS
    for (int j = 0; j < 3; j++) PyBuffer_Release(&v[j]);
    Py_RETURN_NONE;
}

#define DEFINE_DFT(NAME, T)                                                                        \
    static void NAME(const T *seg, const T *cs, const T *sn, T *out, Py_ssize_t rows, Py_ssize_t n, \
                     Py_ssize_t bins) {                                                            \
        for (Py_ssize_t r = 0; r < rows; r++) {                                                    \
            const T *x = seg + r * n;                                                              \
            for (Py_ssize_t i = 0; i < bins; i++) {                                                \
                const T *c = cs + i * n, *s = sn + i * n;                                          \
                T re = (T)0, im = (T)0;                                                            \
                for (Py_ssize_t k = 0; k < n; k++) {                                               \
                    re += x[k] * c[k];                                                             \
                    im += -x[k] * s[k];                                                            \
                }                                                                                  \
                out[2 * (r * bins + i)] = re;                                                      \
                out[2 * (r * bins + i) + 1] = im;                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_DFT(dft_float, float)
DEFINE_DFT(dft_double, double)

static PyObject *dft(PyObject *self, PyObject *args) {
    PyObject *objs[4];
    Py_buffer v[4];
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOn", &objs[0], &objs[1], &objs[2], &objs[3], &n)) return NULL;
    int kind = get_views(objs, v, 4, 1);
    if (kind < 0) return NULL;
    Py_ssize_t item = v[0].itemsize;
    Py_ssize_t total = v[0].len / item, table = v[1].len / item;
    Py_ssize_t rows = n > 0 ? total / n : 0, bins = n > 0 ? table / n : 0;
    if (n <= 0 || total % n != 0 || table % n != 0 || v[2].len != v[1].len || v[3].len / item != 2 * rows * bins) {
        for (int j = 0; j < 4; j++) PyBuffer_Release(&v[j]);
        PyErr_SetString(PyExc_ValueError, "seg must hold rows of n values, cos and sin bins of n, out rows x bins pairs");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    if (kind == 'f')
        dft_float(v[0].buf, v[1].buf, v[2].buf, v[3].buf, rows, n, bins);
    else
        dft_double(v[0].buf, v[1].buf, v[2].buf, v[3].buf, rows, n, bins);
    Py_END_ALLOW_THREADS
    for (int j = 0; j < 4; j++) PyBuffer_Release(&v[j]);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"lfilter", lfilter, METH_VARARGS,
     "lfilter(x, y, n, b, a, clamp): the direct-form-I recurrence over rows of n samples of x into y, "
     "in their precision."},
    {"angle", angle, METH_VARARGS, "angle(z, out): atan2 of each (real, imaginary) pair of z into out."},
    {"dft", dft, METH_VARARGS, "dft(seg, cos, sin, out, n): direct DFT sums of rows of n values, term by term."},
    {"polar", polar, METH_VARARGS, "polar(mag, phase, out): (cos(phase) * mag, sin(phase) * mag) pairs into out."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_audiofilter", NULL, -1, methods};

PyMODINIT_FUNC PyInit__audiofilter(void) { return PyModule_Create(&module); }
