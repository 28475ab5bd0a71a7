/* The per-row loop of a stage that reads a random-access source and maps one column, in C.
 *
 * read_map(items, get, convert, n, nd, obj, fn, one, at, cursor, prog, out, read_fail, map_fail,
 *          finish, pos, phase[, same]) -> bool
 *   For each item of `items` (an iterable of source indices), with p = pos, pos + 1, ...:
 *     stop and return True when `prog.stopped` is true;
 *     phase[0] = False (reading); row = get(item); with n >= 0, unless row is a tuple of n
 *       objects of type `nd` none of whose `dtype` is `obj`, row = convert(row) (n < 0: row as get
 *       returns it); when get or convert raises an Exception e, read_fail(e, item) is called,
 *       which raises;
 *     cursor.index = p; phase[0] = True (mapping);
 *     v = fn(row[one]) (an Exception e: map_fail(e, p), which raises);
 *     appends (v, row[1]) (at == 0) or (row[0], v) (at == 1) to the list `out` when v is of type `nd`
 *     and row holds two values, else finish(row, v, p).
 *   Returns False once every item is done; then, when the list `same` is given, same[0] says
 *   whether every row appended is a pair of values of type `nd` whose `dtype` objects are those
 *   of the first row's, column by column (each row passed the check above as read, and went
 *   through no convert nor finish): what a batch of them needs checked before it stacks them.
 *
 * It does what headrace/_engine/exec/stage_program.py's _one_map does for this shape, with
 * headrace/dataset/_sources/generator.py's RowConverter.reading as the read, in the same order and
 * with the same calls on failure; it exists because the Python loop and row check cost ~0.3 us a
 * row, as much as W1's whole read. The GIL is held throughout (every step calls Python). Each row
 * done appends one entry to `out`: the row being read or mapped is number len(out) of `items`
 * (the watchdog finds a stuck sample that way).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

static PyObject *str_stopped, *str_index, *str_dtype, *zero_obj, *one_obj;

/* 1 when row is a tuple of n arrays of type nd, none of dtype obj; 0 when not; -1 on error.
 * dtype_get: the getter of nd's `dtype` descriptor (see dtype_getter), or NULL. */
static int passes(PyObject *row, Py_ssize_t n, PyObject *nd, PyObject *obj, PyGetSetDef *dtype_get) {
    if (!PyTuple_CheckExact(row) || PyTuple_GET_SIZE(row) != n) return 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *v = PyTuple_GET_ITEM(row, k);
        if ((PyObject *)Py_TYPE(v) != nd) return 0;
        PyObject *dt = dtype_get != NULL ? dtype_get->get(v, dtype_get->closure) : PyObject_GetAttr(v, str_dtype);
        if (dt == NULL) return -1;
        int is_obj = dt == obj;
        Py_DECREF(dt);
        if (is_obj) return 0;
    }
    return 1;
}

/* With an exception set: calls fail(exception, at) when it is an Exception (which is expected to
 * raise), as the Python loop's "except Exception" does; any other (KeyboardInterrupt, ...) stays. */
static void call_fail(PyObject *fail, PyObject *at) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return;
    PyObject *type, *exc, *tb;
    PyErr_Fetch(&type, &exc, &tb);
    PyErr_NormalizeException(&type, &exc, &tb);
    if (tb != NULL) PyException_SetTraceback(exc, tb);
    PyObject *res = PyObject_CallFunctionObjArgs(fail, exc, at, NULL);
    Py_XDECREF(type);
    Py_XDECREF(exc);
    Py_XDECREF(tb);
    if (res != NULL) {  /* it returned: say so rather than carry on with no row */
        Py_DECREF(res);
        PyErr_SetString(PyExc_RuntimeError, "a failure handler of the row loop returned instead of raising");
    }
}

/* list[0] = value (list: a list of one item at least, as read_map checks `phase` and `same`). */
static void set_first(PyObject *list, PyObject *value) {
    PyObject *old = PyList_GET_ITEM(list, 0);
    Py_INCREF(value);
    PyList_SET_ITEM(list, 0, value);
    Py_XDECREF(old);
}

/* Where `obj.name` lives when it is a plain __slots__ member of obj's type (T_OBJECT_EX, writable,
 * the generic attribute access): its offset in the object, read and written here without the
 * attribute machinery. The two attributes' lookups took about 2% of a W1 task (341 -> 334 us a
 * task of 256 rows, in one process, 2026-11-30). 0 when it is not such a slot: the caller then
 * uses PyObject_GetAttr / PyObject_SetAttr. */
static Py_ssize_t slot_offset(PyObject *obj, PyObject *name) {
    PyTypeObject *tp = Py_TYPE(obj);
    if (tp->tp_getattro != PyObject_GenericGetAttr || tp->tp_setattro != PyObject_GenericSetAttr) return 0;
    PyObject *descr = PyObject_GetAttr((PyObject *)tp, name);  /* a slot's member descriptor, on the type */
    if (descr == NULL) {
        PyErr_Clear();  /* no such attribute on the type: the generic path raises, per row, as before */
        return 0;
    }
    Py_ssize_t offset = 0;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        if (m->type == T_OBJECT_EX && !(m->flags & READONLY) && m->offset > 0) offset = m->offset;
    }
    Py_DECREF(descr);
    return offset;
}

/* The getter behind `v.dtype` for every v of type nd, when nd's attribute access is the generic
 * one and `dtype` is a plain getset descriptor of the type (NumPy's ndarray): called directly, as
 * the attribute access would call it after looking the name up on the type. NULL otherwise. */
static PyGetSetDef *dtype_getter(PyObject *nd) {
    if (!PyType_Check(nd) || ((PyTypeObject *)nd)->tp_getattro != PyObject_GenericGetAttr) return NULL;
    PyObject *descr = PyObject_GetAttr(nd, str_dtype);
    if (descr == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyGetSetDef *g = NULL;
    if (Py_IS_TYPE(descr, &PyGetSetDescr_Type) && ((PyGetSetDescrObject *)descr)->d_getset->get != NULL)
        g = ((PyGetSetDescrObject *)descr)->d_getset;
    Py_DECREF(descr);  /* (the type keeps its descriptor, and the descriptor its PyGetSetDef) */
    return g;
}

/* Whether the dtypes of the pair rec's two values (arrays of the type dtype_get reads) are the
 * objects in first (which the first call fills, keeping a reference to each). */
static int same_dtypes(PyObject **first, PyObject *rec, PyGetSetDef *dtype_get) {
    int same = 1;
    for (int k = 0; k < 2; k++) {
        PyObject *dt = dtype_get->get(PyTuple_GET_ITEM(rec, k), dtype_get->closure);
        if (dt == NULL) {  /* (a getter that fails: not one to rely on) */
            PyErr_Clear();
            return 0;
        }
        if (first[k] == NULL) {
            first[k] = dt;
        } else {
            same = same && dt == first[k];
            Py_DECREF(dt);
        }
    }
    return same;
}

/* prog.stopped through its slot (at > 0) or the attribute; 1, 0, or -1 with an exception. */
static int is_stopped(PyObject *prog, Py_ssize_t at) {
    if (at > 0) {
        PyObject *v = *(PyObject **)((char *)prog + at);
        if (v == Py_False) return 0;
        if (v == Py_True) return 1;
        if (v != NULL) return PyObject_IsTrue(v);
    }
    PyObject *stopped = PyObject_GetAttr(prog, str_stopped);  /* (unset slot: its AttributeError) */
    if (stopped == NULL) return -1;
    int stop = PyObject_IsTrue(stopped);
    Py_DECREF(stopped);
    return stop;
}

/* cursor.index = p, through its slot (at > 0) or the attribute; 0, or -1 with an exception. */
static int set_index(PyObject *cursor, Py_ssize_t at, PyObject *p) {
    if (at <= 0) return PyObject_SetAttr(cursor, str_index, p);
    PyObject **slot = (PyObject **)((char *)cursor + at);
    PyObject *old = *slot;
    Py_INCREF(p);
    *slot = p;
    Py_XDECREF(old);
    return 0;
}

static PyObject *read_map(PyObject *self, PyObject *args) {
    PyObject *items, *get, *convert, *nd, *obj, *fn, *cursor, *prog, *out, *read_fail, *map_fail, *finish, *phase;
    PyObject *same = NULL;
    Py_ssize_t n, one, at, pos;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOnOOOnnOOO!OOOnO!|O!", &items, &get, &convert, &n, &nd, &obj, &fn, &one, &at,
                          &cursor, &prog, &PyList_Type, &out, &read_fail, &map_fail, &finish, &pos,
                          &PyList_Type, &phase, &PyList_Type, &same))
        return NULL;
    if (one < 0 || one > 1 || at < 0 || at > 1 || PyList_GET_SIZE(phase) < 1
            || (same != NULL && PyList_GET_SIZE(same) < 1)) {
        PyErr_SetString(PyExc_ValueError, "one and at must be 0 or 1, phase (and same) a list of one item at least");
        return NULL;
    }
    /* (found once; used while the objects keep their type: an assignment to __class__ ends it) */
    PyTypeObject *prog_tp = Py_TYPE(prog), *cursor_tp = Py_TYPE(cursor);
    Py_ssize_t stopped_at = slot_offset(prog, str_stopped), index_at = slot_offset(cursor, str_index);
    PyGetSetDef *dtype_get = n > 0 ? dtype_getter(nd) : NULL;
    /* same[0]: the dtypes of the first row's two values (kept), and whether every row matched */
    int uniform = same != NULL && dtype_get != NULL && n == 2;
    PyObject *first_dt[2] = {NULL, NULL};
    PyObject *it = PyObject_GetIter(items);
    if (it == NULL) return NULL;
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        PyObject *row = NULL, *v = NULL, *cell = NULL, *p = NULL;
        int ok = 0, passed = 0;
        int stop = is_stopped(prog, Py_TYPE(prog) == prog_tp ? stopped_at : 0);
        if (stop < 0) goto row_done;
        if (stop) {
            Py_DECREF(item);
            Py_DECREF(it);
            Py_XDECREF(first_dt[0]);
            Py_XDECREF(first_dt[1]);
            Py_RETURN_TRUE;
        }
        set_first(phase, Py_False);
        row = PyObject_CallOneArg(get, item);
        if (row != NULL && n >= 0) {
            int pass = passes(row, n, nd, obj, dtype_get);
            passed = pass == 1;
            if (pass <= 0) {
                PyObject *raw = row;
                row = pass < 0 ? NULL : PyObject_CallOneArg(convert, raw);
                Py_DECREF(raw);
            }
        }
        if (row == NULL) {
            call_fail(read_fail, item);
            goto row_done;
        }
        p = PyLong_FromSsize_t(pos);
        if (p == NULL || set_index(cursor, Py_TYPE(cursor) == cursor_tp ? index_at : 0, p) < 0) goto row_done;
        set_first(phase, Py_True);
        int tup = PyTuple_CheckExact(row) && PyTuple_GET_SIZE(row) > 1;  /* (a tuple: row[k] without a call) */
        if (tup) {
            cell = PyTuple_GET_ITEM(row, one);
            Py_INCREF(cell);
        } else {
            cell = PyObject_GetItem(row, one ? one_obj : zero_obj);  /* row[one], as Python indexes it */
        }
        v = cell != NULL ? PyObject_CallOneArg(fn, cell) : NULL;
        if (v == NULL) {
            call_fail(map_fail, p);
            goto row_done;
        }
        PyObject *rec;
        if ((PyObject *)Py_TYPE(v) == nd && (tup ? PyTuple_GET_SIZE(row) : PyObject_Size(row)) == 2) {  /* len(row) == 2 */
            PyObject *other = tup ? Py_NewRef(PyTuple_GET_ITEM(row, at ? 0 : 1)) : PyObject_GetItem(row, at ? zero_obj : one_obj);
            if (other == NULL) goto row_done;
            rec = at == 0 ? PyTuple_Pack(2, v, other) : PyTuple_Pack(2, other, v);
            if (uniform && rec != NULL) uniform = passed && same_dtypes(first_dt, rec, dtype_get);
            Py_DECREF(other);
        } else {
            if (PyErr_Occurred()) goto row_done;  /* len(row) failed */
            uniform = 0;
            rec = PyObject_CallFunctionObjArgs(finish, row, v, p, NULL);
        }
        if (rec == NULL) goto row_done;
        ok = PyList_Append(out, rec) == 0;
        Py_DECREF(rec);
        pos++;
    row_done:
        Py_XDECREF(p);
        Py_XDECREF(cell);
        Py_XDECREF(v);
        Py_XDECREF(row);
        Py_DECREF(item);
        if (!ok) {
            Py_DECREF(it);
            Py_XDECREF(first_dt[0]);
            Py_XDECREF(first_dt[1]);
            return NULL;
        }
    }
    Py_DECREF(it);
    int any = first_dt[0] != NULL;
    Py_XDECREF(first_dt[0]);
    Py_XDECREF(first_dt[1]);
    if (PyErr_Occurred()) return NULL;
    if (same != NULL) set_first(same, uniform && any ? Py_True : Py_False);
    Py_RETURN_FALSE;
}

static PyMethodDef methods[] = {
    {"read_map", read_map, METH_VARARGS,
     "read_map(items, get, convert, n, nd, obj, fn, one, at, cursor, prog, out, read_fail, map_fail, finish, pos, "
     "phase)"
     " -> stopped: reads, checks and maps the rows of items into out (see the module's source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rows", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rows(void) {
    str_stopped = PyUnicode_InternFromString("stopped");
    str_index = PyUnicode_InternFromString("index");
    str_dtype = PyUnicode_InternFromString("dtype");
    zero_obj = PyLong_FromLong(0);
    one_obj = PyLong_FromLong(1);
    if (str_stopped == NULL || str_index == NULL || str_dtype == NULL || zero_obj == NULL || one_obj == NULL)
        return NULL;
    return PyModule_Create(&module);
}
