/* Helpers shared by retrograd's optional C modules (_engine_loop.c, _op_call.c).
 *
 * Both are configured once, by retrograd/_C/_configure.py, with one namespace object whose
 * attributes are the Python classes, functions and values they work with (see Binding below),
 * and both report what they read of those objects through layout(), which
 * tests/test_compiled_layout.py holds against the Python classes.
 *
 * Most read and write the __slots__ of retrograd's Python classes (Tensor, Node, SavedTensor...)
 * through the offsets of the classes' member descriptors, as CPython's own member descriptors
 * do, instead of an attribute lookup per access. A subclass keeps its bases' layout, so an
 * offset read from a class serves its instances and its subclasses' instances.
 */
#ifndef RETROGRAD_CAPI_H
#define RETROGRAD_CAPI_H

#include <Python.h>
#include <structmember.h>

#ifndef Py_T_OBJECT_EX
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

/* The value of a slot of `obj` (borrowed; NULL when unset). */
static inline PyObject *
slot(PyObject *obj, Py_ssize_t off)
{
    return *(PyObject **)((char *)obj + off);
}

/* Sets a slot of `obj` to a new reference to `value`, releasing the old value. */
static inline void
set_slot(PyObject *obj, Py_ssize_t off, PyObject *value)
{
    PyObject **ptr = (PyObject **)((char *)obj + off);
    PyObject *old = *ptr;
    *ptr = Py_NewRef(value);
    Py_XDECREF(old);
}

/* -- configuration --------------------------------------------------------------------------------- */

/* One entry of a module's configuration: the namespace attribute `name` is bound to *target.
 * `kind` says what it must be: any object, a type, a tuple type (Edge), or a callable. */
enum { BIND_ANY, BIND_TYPE, BIND_TUPLE_TYPE, BIND_CALLABLE };
typedef struct {
    const char *name;
    PyObject **target;
    int kind;
} Binding;

/* Binds every entry of `table` from the namespace `ns`; on any error (a missing attribute, one of
 * the wrong kind) it binds nothing and returns -1 with the error set, naming the entry. */
static inline int
bind_all(PyObject *ns, const Binding *table, int n)
{
    PyObject **got = PyMem_Calloc(n > 0 ? n : 1, sizeof(PyObject *));
    if (got == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int i = 0;
    for (; i < n; i++) {
        PyObject *v = PyObject_GetAttrString(ns, table[i].name);
        if (v == NULL)
            break;
        got[i] = v;
        int ok = table[i].kind == BIND_ANY ||
                 (table[i].kind == BIND_TYPE && PyType_Check(v)) ||
                 (table[i].kind == BIND_TUPLE_TYPE && PyType_Check(v) &&
                  PyType_IsSubtype((PyTypeObject *)v, &PyTuple_Type)) ||
                 (table[i].kind == BIND_CALLABLE && PyCallable_Check(v));
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "configure: %s must be %s", table[i].name,
                         table[i].kind == BIND_CALLABLE ? "callable" :
                         table[i].kind == BIND_TUPLE_TYPE ? "a tuple type" : "a type");
            i++;
            break;
        }
    }
    if (PyErr_Occurred()) {
        for (int k = 0; k < i; k++)
            Py_XDECREF(got[k]);
        PyMem_Free(got);
        return -1;
    }
    for (int k = 0; k < n; k++)
        Py_XSETREF(*table[k].target, got[k]);
    PyMem_Free(got);
    return 0;
}

/* The names of the namespace attributes `table` binds, as a tuple. */
static inline PyObject *
binding_names(const Binding *table, int n)
{
    PyObject *names = PyTuple_New(n);
    for (int i = 0; names != NULL && i < n; i++) {
        PyObject *s = PyUnicode_FromString(table[i].name);
        if (s == NULL)
            Py_CLEAR(names);
        else
            PyTuple_SET_ITEM(names, i, s);
    }
    return names;
}

/* A tuple of str from `n` C strings. */
static inline PyObject *
str_tuple(const char *const *items, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t != NULL && i < n; i++) {
        PyObject *s = PyUnicode_FromString(items[i]);
        if (s == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

/* The offset of the __slots__ attribute `name` of class `cls`; -1 with TypeError if it is not one. */
static inline int
member_offset(PyObject *cls, const char *name, Py_ssize_t *off)
{
    PyObject *descr = PyObject_GetAttrString(cls, name);
    if (descr == NULL)
        return -1;
    int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
             ((PyMemberDescrObject *)descr)->d_member->type == Py_T_OBJECT_EX;
    if (ok)
        *off = ((PyMemberDescrObject *)descr)->d_member->offset;
    else
        PyErr_Format(PyExc_TypeError, "%s.%s is not a __slots__ attribute", ((PyTypeObject *)cls)->tp_name, name);
    Py_DECREF(descr);
    return ok ? 0 : -1;
}

/* Tensor's slots that the modules read or set, by their names in Tensor.__slots__ (_tensor.py). */
enum { T_DATA, T_DEVICE, T_REQUIRES_GRAD, T_GRAD_FN, T_OUTPUT_NR, T_VC, T_BASE, T_GRAD, T_GRAD_ACC, T_HOOKS,
       T_RETAINS, T_VIEW_VERSION, T_VIEW_FN, T_VIEW_CREATION, T_COUNT };
static const char *const tensor_fields[T_COUNT] = {
    "_data", "_device", "_requires_grad", "_node", "_output_nr", "_vc", "_base", "_grad", "_grad_accumulator",
    "_hooks", "_retains_grad", "_view_version", "_view_fn", "_view_creation"};

/* The slots Node.__init__ (autograd/graph.py) sets, by name; _extras is None or a NodeExtras
 * (Note [A node's hooks and metadata] in autograd/graph.py). */
enum { N_NEXT_EDGES, N_SEQUENCE_NR, N_INPUT_METADATA, N_EXTRAS, N_COUNT };
static const char *const node_fields[N_COUNT] = {"next_edges", "sequence_nr", "input_metadata", "_extras"};

/* SavedTensor's slots (autograd/saved_variable.py) that the modules set or read, by name. */
enum { ST_ARRAY, ST_PACKED, ST_RELEASED, ST_VERSION_COUNTER, ST_SAVED_VERSION, ST_EDGE_NODE, ST_OUTPUT_NR,
       ST_IS_OUTPUT, ST_REQUIRES_GRAD, ST_DEVICE, ST_UNPACK_HOOK, ST_IS_LEAF, ST_ORIGINAL, ST_COUNT };
static const char *const st_fields[ST_COUNT] = {"array", "packed", "released", "version_counter", "saved_version",
                                                "edge_node", "output_nr", "is_output", "requires_grad", "device",
                                                "unpack_hook", "is_leaf", "original"};

/* Fills off[0..n) with the offsets of the slots `names` of class `cls` (tensor_fields,
 * node_fields, st_fields...); -1 on error. */
static inline int
slot_offsets(PyObject *cls, const char *const *names, int n, Py_ssize_t *off)
{
    for (int i = 0; i < n; i++)
        if (member_offset(cls, names[i], &off[i]) < 0)
            return -1;
    return 0;
}

/* The __slots__ a module reads or sets by offset, per class: `cls` names the class's entry in
 * the configuration namespace, `fields` its slots, and `off` receives their offsets. */
typedef struct {
    const char *cls;
    const char *const *fields;
    int n;
    Py_ssize_t *off;
} FieldTable;

/* Fills every table's offsets from the classes of the namespace `ns`; -1 on error. */
static inline int
field_tables_init(PyObject *ns, const FieldTable *tables, int n)
{
    for (int i = 0; i < n; i++) {
        PyObject *cls = PyObject_GetAttrString(ns, tables[i].cls);
        if (cls == NULL)
            return -1;
        int r = PyType_Check(cls) ? slot_offsets(cls, tables[i].fields, tables[i].n, tables[i].off) : -1;
        if (r < 0 && !PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "configure: %s must be a type", tables[i].cls);
        Py_DECREF(cls);
        if (r < 0)
            return -1;
    }
    return 0;
}

/* {class entry: {field: offset}} of the tables, as the module uses them (after configure). */
static inline PyObject *
field_tables_layout(const FieldTable *tables, int n)
{
    PyObject *out = PyDict_New();
    for (int i = 0; out != NULL && i < n; i++) {
        PyObject *fields = PyDict_GetItemString(out, tables[i].cls);  /* borrowed; a class may have several */
        if (fields == NULL) {
            fields = PyDict_New();
            if (fields == NULL || PyDict_SetItemString(out, tables[i].cls, fields) < 0) {
                Py_XDECREF(fields);
                Py_CLEAR(out);
                break;
            }
            Py_DECREF(fields);
        }
        for (int k = 0; k < tables[i].n; k++) {
            PyObject *off = PyLong_FromSsize_t(tables[i].off[k]);
            if (off == NULL || PyDict_SetItemString(fields, tables[i].fields[k], off) < 0) {
                Py_XDECREF(off);
                Py_CLEAR(out);
                break;
            }
            Py_DECREF(off);
        }
    }
    return out;
}

/* A tuple the module reads by position: its name in layout() and its fields, in order. */
typedef struct {
    const char *name;
    const char *const *fields;
    int n;
} TupleTable;

/* An attribute name the module reads, sets or calls, interned at import into *var, with the
 * objects it is read on (space-separated: namespace entries, or kinds of object like "ndarray"). */
typedef struct {
    PyObject **var;
    const char *text;
    const char *owners;
} Interned;

/* Interns every name of the table; -1 on error. */
static inline int
intern_all(const Interned *names, int n)
{
    for (int i = 0; i < n; i++)
        if ((*names[i].var = PyUnicode_InternFromString(names[i].text)) == NULL)
            return -1;
    return 0;
}

/* The report of layout(): {"namespace": (entries bound), "slots": {class: {field: offset}},
 * "tuples": {name: (fields)}, "attributes": {owner: [names]}}, from the module's tables. */
static inline PyObject *
layout_report(const Binding *bindings, int nb, const FieldTable *tables, int nt, const TupleTable *tuples,
              int ntu, const Interned *names, int nn)
{
    PyObject *out = PyDict_New(), *v = NULL;
    if (out == NULL)
        return NULL;
    if ((v = binding_names(bindings, nb)) == NULL || PyDict_SetItemString(out, "namespace", v) < 0)
        goto error;
    Py_SETREF(v, field_tables_layout(tables, nt));
    if (v == NULL || PyDict_SetItemString(out, "slots", v) < 0)
        goto error;
    Py_SETREF(v, PyDict_New());
    if (v == NULL || PyDict_SetItemString(out, "tuples", v) < 0)
        goto error;
    for (int i = 0; i < ntu; i++) {
        PyObject *t = str_tuple(tuples[i].fields, tuples[i].n);
        if (t == NULL || PyDict_SetItemString(v, tuples[i].name, t) < 0) {
            Py_XDECREF(t);
            goto error;
        }
        Py_DECREF(t);
    }
    Py_SETREF(v, PyDict_New());
    if (v == NULL || PyDict_SetItemString(out, "attributes", v) < 0)
        goto error;
    for (int i = 0; i < nn; i++) {
        PyObject *owners = PyUnicode_FromString(names[i].owners);
        PyObject *split = owners ? PyUnicode_Split(owners, NULL, -1) : NULL;
        Py_XDECREF(owners);
        if (split == NULL)
            goto error;
        for (Py_ssize_t k = 0; k < PyList_GET_SIZE(split); k++) {
            PyObject *owner = PyList_GET_ITEM(split, k), *list = PyDict_GetItemWithError(v, owner);
            if (list == NULL) {
                if (PyErr_Occurred() || (list = PyList_New(0)) == NULL || PyDict_SetItem(v, owner, list) < 0) {
                    Py_XDECREF(list);
                    Py_DECREF(split);
                    goto error;
                }
                Py_DECREF(list);
            }
            if (PyList_Append(list, *names[i].var) < 0) {
                Py_DECREF(split);
                goto error;
            }
        }
        Py_DECREF(split);
    }
    Py_DECREF(v);
    return out;
error:
    Py_XDECREF(v);
    Py_DECREF(out);
    return NULL;
}

/* read_slot(obj, offset): the object stored at byte `offset` of `obj`, or None where the slot is
 * unset. For the layout test, which sets each field through Python and reads it back here; it
 * refuses an offset outside the object's fixed part. */
static inline PyObject *
read_slot_py(PyObject *module, PyObject *args)
{
    PyObject *obj;
    Py_ssize_t off;
    if (!PyArg_ParseTuple(args, "On:read_slot", &obj, &off))
        return NULL;
    if (off < (Py_ssize_t)sizeof(PyObject) || off + (Py_ssize_t)sizeof(PyObject *) > Py_TYPE(obj)->tp_basicsize ||
        off % (Py_ssize_t)sizeof(PyObject *) != 0) {
        PyErr_SetString(PyExc_ValueError, "read_slot: the offset is not a slot of the object");
        return NULL;
    }
    PyObject *v = slot(obj, off);
    return Py_NewRef(v != NULL ? v : Py_None);
}

/* The fields Node.__init__ sets, on a node made by tp_alloc (`off` of node_fields): its
 * edges, sequence number and input metadata (left unset when NULL), no hooks or metadata (_extras None). */
static inline void
set_node_fields(PyObject *node, const Py_ssize_t *off, PyObject *next_edges, PyObject *sequence_nr, PyObject *metas)
{
    set_slot(node, off[N_NEXT_EDGES], next_edges);
    set_slot(node, off[N_SEQUENCE_NR], sequence_nr);
    if (metas != NULL)
        set_slot(node, off[N_INPUT_METADATA], metas);
    set_slot(node, off[N_EXTRAS], Py_None);
}

/* For a declared shortcut `entry` = (what, with, n, when): a formula's direct form in the
 * engine loop, an op's ufunc forward in the op call. Returns n when every (position, value) of
 * `when` holds for args (args[position] is value), and 0 when one does not or when the entry is
 * not of that form or reaches past args[0..nargs): the caller then runs the Python code, which
 * does not read the entry at all. -1 only for an error raised while reading it. */
static inline Py_ssize_t
declared_args(PyObject *entry, PyObject *const *args, Py_ssize_t nargs)
{
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4 || !PyTuple_Check(PyTuple_GET_ITEM(entry, 3)) ||
        !PyLong_Check(PyTuple_GET_ITEM(entry, 2)))
        return 0;
    Py_ssize_t n = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 2));
    if (n == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    if (n < 1 || n > nargs)
        return 0;
    PyObject *when = PyTuple_GET_ITEM(entry, 3);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(when); i++) {
        PyObject *cond = PyTuple_GET_ITEM(when, i);
        if (!PyTuple_Check(cond) || PyTuple_GET_SIZE(cond) != 2 || !PyLong_Check(PyTuple_GET_ITEM(cond, 0)))
            return 0;
        Py_ssize_t pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(cond, 0));
        if (pos == -1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                return -1;
            PyErr_Clear();
            return 0;
        }
        if (pos < 0 || pos >= nargs)
            return 0;
        if (args[pos] != PyTuple_GET_ITEM(cond, 1))
            return 0;
    }
    return n;
}

/* A new `type` instance wrapping `data` on `device`, with every other field as Tensor._make
 * sets it (`zero`: the int 0); the view fields stay unset, as there. */
static inline PyObject *
new_tensor(PyTypeObject *type, const Py_ssize_t *off, PyObject *data, PyObject *device, PyObject *zero)
{
    PyObject *t = type->tp_alloc(type, 0);
    if (t == NULL)
        return NULL;
    set_slot(t, off[T_DATA], data);
    set_slot(t, off[T_DEVICE], device);
    set_slot(t, off[T_REQUIRES_GRAD], Py_False);
    set_slot(t, off[T_GRAD_FN], Py_None);
    set_slot(t, off[T_OUTPUT_NR], zero);
    set_slot(t, off[T_VC], Py_None);
    set_slot(t, off[T_BASE], Py_None);
    set_slot(t, off[T_GRAD], Py_None);
    set_slot(t, off[T_GRAD_ACC], Py_None);
    set_slot(t, off[T_HOOKS], Py_None);
    set_slot(t, off[T_RETAINS], Py_False);
    return t;
}

/* -- NumPy arrays -------------------------------------------------------------------------------------
 *
 * The fields of an ndarray that the modules read: the head of NumPy's PyArrayObject_fields, which NumPy's
 * own C API macros (PyArray_NDIM, PyArray_DIMS, PyArray_BASE, PyArray_DESCR, PyArray_FLAGS) read and which
 * NumPy keeps the same across versions. The modules are built without NumPy's headers, so array_head_init
 * checks this layout at configure, on arrays of several kinds, against what their attributes say; where
 * it does not hold, or an object is not exactly an ndarray, every read goes through getattr as before.
 * An attribute read costs about 150 instructions and, for shape and flags, a new object; a field read,
 * a load. */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} ArrayHead;
#define ARRAY_HEAD(a) ((ArrayHead *)(a))
#define ARRAY_C_CONTIGUOUS 0x0001  /* NPY_ARRAY_C_CONTIGUOUS: flags.c_contiguous */
#define ARRAY_WRITEABLE 0x0400     /* NPY_ARRAY_WRITEABLE: flags.writeable */

static PyTypeObject *direct_ndarray;  /* numpy.ndarray where array_head_init found the layout, else NULL */

/* Whether `a` is exactly an ndarray whose fields this module reads directly. */
static inline int
array_direct(PyObject *a)
{
    return direct_ndarray != NULL && Py_TYPE(a) == direct_ndarray;
}

/* 1 where `arr`'s fields say what its attributes do; 0 where not; -1 on error. */
static inline int
array_head_agrees(PyObject *arr)
{
    PyObject *shape = PyObject_GetAttrString(arr, "shape"), *dtype = PyObject_GetAttrString(arr, "dtype");
    PyObject *base = PyObject_GetAttrString(arr, "base"), *flags = PyObject_GetAttrString(arr, "flags");
    PyObject *c = flags ? PyObject_GetAttrString(flags, "c_contiguous") : NULL;
    PyObject *w = flags ? PyObject_GetAttrString(flags, "writeable") : NULL;
    int ok = -1;
    if (shape != NULL && dtype != NULL && base != NULL && c != NULL && w != NULL && PyTuple_Check(shape)) {
        ArrayHead *h = ARRAY_HEAD(arr);
        ok = h->nd == PyTuple_GET_SIZE(shape) && h->descr == dtype && (h->base == NULL ? Py_None : h->base) == base &&
             ((h->flags & ARRAY_C_CONTIGUOUS) != 0) == (c == Py_True) && ((h->flags & ARRAY_WRITEABLE) != 0) == (w == Py_True);
        for (int i = 0; ok == 1 && i < h->nd; i++)
            ok = h->dimensions[i] == PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
    }
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    Py_XDECREF(base);
    Py_XDECREF(flags);
    Py_XDECREF(c);
    Py_XDECREF(w);
    return PyErr_Occurred() ? -1 : ok;
}

/* Reads the fields of arrays made by `numpy` (a module) of several kinds (a 2-d array, its transpose, a
 * read-only view of a slice, a 0-d array, an empty one) and sets direct_ndarray where they all agree with
 * the attributes. -1 on error. */
static inline int
array_head_init(PyObject *numpy)
{
    direct_ndarray = NULL;
    PyObject *globals = PyDict_New(), *arrays = NULL;
    if (globals != NULL && PyDict_SetItemString(globals, "np", numpy) == 0 &&
        PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) == 0)
        arrays = PyRun_String("(lambda a: [a, a.T, a[1:, ::2], np.ones((), np.float32), np.empty((0, 4), np.int64)])"
                              "(np.arange(24.0).reshape(4, 6))", Py_eval_input, globals, NULL);
    Py_XDECREF(globals);
    PyObject *ndarray = PyObject_GetAttrString(numpy, "ndarray");
    int ok = arrays != NULL && ndarray != NULL && PyList_Check(arrays) ? 1 : -1;
    if (ok == 1) {
        PyObject *view = PyList_GET_ITEM(arrays, 2), *r = PyObject_CallMethod(view, "setflags", "(O)", Py_False);
        ok = r == NULL ? -1 : 1;
        Py_XDECREF(r);
    }
    for (Py_ssize_t i = 0; ok == 1 && i < PyList_GET_SIZE(arrays); i++) {
        PyObject *a = PyList_GET_ITEM(arrays, i);
        ok = Py_TYPE(a) == (PyTypeObject *)ndarray ? array_head_agrees(a) : 0;
    }
    if (ok == 1)
        direct_ndarray = (PyTypeObject *)ndarray;  /* the module's binding of numpy keeps it */
    Py_XDECREF(arrays);
    Py_XDECREF(ndarray);
    return ok < 0 ? -1 : 0;
}

/* layout()'s entry for arrays: {"read_directly": whether array_head_init found the layout, "fields": the
 * fields of PyArrayObject_fields read}; -1 on error. */
static inline int
array_layout_report(PyObject *out)
{
    PyObject *entry = Py_BuildValue("{s:O,s:(sssss)}", "read_directly", direct_ndarray != NULL ? Py_True : Py_False,
                                    "fields", "nd", "dimensions", "base", "descr", "flags");
    int rc = entry == NULL ? -1 : PyDict_SetItemString(out, "arrays", entry);
    Py_XDECREF(entry);
    return rc;
}

/* arr.dtype (a new reference) */
static inline PyObject *
array_dtype(PyObject *arr)
{
    static PyObject *name;
    if (array_direct(arr))
        return Py_NewRef(ARRAY_HEAD(arr)->descr);
    if (name == NULL && (name = PyUnicode_InternFromString("dtype")) == NULL)
        return NULL;
    return PyObject_GetAttr(arr, name);
}

/* arr.shape == shape for a tuple `shape`: 1, 0, or -1 on error. */
static inline int
array_shape_is(PyObject *arr, PyObject *shape)
{
    static PyObject *name;
    if (array_direct(arr) && PyTuple_Check(shape)) {
        ArrayHead *h = ARRAY_HEAD(arr);
        if (PyTuple_GET_SIZE(shape) != h->nd)
            return 0;
        for (int i = 0; i < h->nd; i++) {
            PyObject *n = PyTuple_GET_ITEM(shape, i);
            if (!PyLong_CheckExact(n))
                goto slow;  /* an element that compares as it likes */
            Py_ssize_t v = PyLong_AsSsize_t(n);
            if (v == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                goto slow;
            }
            if (v != h->dimensions[i])
                return 0;
        }
        return 1;
    }
slow:
    if (name == NULL && (name = PyUnicode_InternFromString("shape")) == NULL)
        return -1;
    PyObject *own = PyObject_GetAttr(arr, name);
    if (own == NULL)
        return -1;
    int eq = PyObject_RichCompareBool(own, shape, Py_EQ);
    Py_DECREF(own);
    return eq;
}

/* bool(arr.flags.<flag>) for ARRAY_C_CONTIGUOUS ("c_contiguous") or ARRAY_WRITEABLE ("writeable"): 1, 0, or -1. */
static inline int
array_flag(PyObject *arr, int flag)
{
    if (array_direct(arr))
        return (ARRAY_HEAD(arr)->flags & flag) != 0;
    PyObject *flags = PyObject_GetAttrString(arr, "flags");
    if (flags == NULL)
        return -1;
    PyObject *v = PyObject_GetAttrString(flags, flag == ARRAY_C_CONTIGUOUS ? "c_contiguous" : "writeable");
    Py_DECREF(flags);
    if (v == NULL)
        return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

/* arr.base (a new reference: None where the array owns its memory) */
static inline PyObject *
array_base(PyObject *arr)
{
    if (array_direct(arr))
        return Py_NewRef(ARRAY_HEAD(arr)->base != NULL ? ARRAY_HEAD(arr)->base : Py_None);
    return PyObject_GetAttrString(arr, "base");
}

/* -- thread-local state -----------------------------------------------------------------------------
 *
 * The engine's and the autograd switches' per-thread state lives in threading.local objects (grad_mode's
 * `state`, graph_task's `local`, saved_hooks' state). CPython finds a local's dict for the running thread
 * on every attribute access (about 300 instructions a read or write). A ThreadLocal finds it once per
 * thread and keeps it in the thread-state dict under a key of its own (a fresh object per configure), so
 * that a read is two dict look-ups: the dict the local itself would read or write, found by another way.
 * That holds where the local's class reads and writes its attributes as threading.local does (no
 * __getattribute__, __getattr__ or __setattr__ of its own) and none of the names the module uses is a
 * data descriptor of the class: then a name is the thread's dict entry, else the class attribute, as
 * CPython's generic lookup with the local's dict finds it. Where that does not hold (checked at
 * configure), or the dict cannot be had, each access goes through getattr and setattr. The thread-state
 * dict is cleared when its thread ends, and the kept dict goes with it. */
typedef struct {
    PyObject *obj;  /* the local (the module's binding holds it) */
    PyObject *key;  /* the entry of this configuration in each thread-state dict */
    int plain;      /* lookups as described above; else getattr and setattr */
} ThreadLocal;

/* Binds `tl` to the local `obj`, whose attributes `names` (interned) the module uses; -1 on error. */
static inline int
thread_local_init(ThreadLocal *tl, PyObject *obj, PyObject *const *names, int n)
{
    tl->obj = obj;
    tl->plain = 0;
    PyObject *key = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (key == NULL)
        return -1;
    Py_XSETREF(tl->key, key);
    PyObject *thread_module = PyImport_ImportModule("_thread");
    PyObject *local_type = thread_module != NULL ? PyObject_GetAttrString(thread_module, "_local") : NULL;
    Py_XDECREF(thread_module);
    if (local_type == NULL)
        return -1;
    PyTypeObject *type = Py_TYPE(obj), *base = (PyTypeObject *)local_type;
    int plain = PyType_Check(local_type) && PyObject_TypeCheck(obj, base) && type->tp_getattro == base->tp_getattro &&
                type->tp_setattro == base->tp_setattro;
    Py_DECREF(local_type);
    for (int i = 0; plain && i < n; i++) {
        PyObject *attr = _PyType_Lookup(type, names[i]);  /* borrowed */
        if (attr != NULL && (Py_TYPE(attr)->tp_descr_set != NULL || Py_TYPE(attr)->tp_descr_get != NULL))
            plain = 0;  /* a descriptor: the generic lookup decides */
    }
    tl->plain = plain;
    return 0;
}

/* The local's dict for the running thread (borrowed: the thread-state dict holds it), or NULL, with no
 * error set, where the accesses must go through getattr and setattr. */
static inline PyObject *
thread_local_dict(ThreadLocal *tl)
{
    if (!tl->plain)
        return NULL;
    PyObject *tdict = PyThreadState_GetDict();  /* borrowed */
    if (tdict == NULL)
        return NULL;
    PyObject *d = PyDict_GetItemWithError(tdict, tl->key);
    if (d != NULL)
        return PyDict_CheckExact(d) ? d : NULL;
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    static PyObject *dict_name;
    if (dict_name == NULL && (dict_name = PyUnicode_InternFromString("__dict__")) == NULL) {
        PyErr_Clear();
        return NULL;
    }
    d = PyObject_GetAttr(tl->obj, dict_name);  /* threading.local's __dict__: this thread's */
    if (d == NULL || !PyDict_CheckExact(d) || PyDict_SetItem(tdict, tl->key, d) < 0) {
        PyErr_Clear();
        Py_XDECREF(d);
        return NULL;
    }
    Py_DECREF(d);  /* the thread-state dict holds it */
    return d;
}

/* local.name (a name given to thread_local_init): a new reference, or NULL with an error. */
static inline PyObject *
thread_local_get(ThreadLocal *tl, PyObject *name)
{
    PyObject *d = thread_local_dict(tl);
    if (d != NULL) {
        PyObject *v = PyDict_GetItemWithError(d, name);
        if (v != NULL)
            return Py_NewRef(v);
        if (PyErr_Occurred())
            return NULL;
        v = _PyType_Lookup(Py_TYPE(tl->obj), name);  /* the class's default: not a descriptor (init checked) */
        if (v != NULL && Py_TYPE(v)->tp_descr_get == NULL)
            return Py_NewRef(v);
    }
    return PyObject_GetAttr(tl->obj, name);
}

/* local.name = value; -1 on error. */
static inline int
thread_local_set(ThreadLocal *tl, PyObject *name, PyObject *value)
{
    PyObject *d = thread_local_dict(tl);
    return d != NULL ? PyDict_SetItem(d, name, value) : PyObject_SetAttr(tl->obj, name, value);
}

/* bool(v) for a new reference `v`, which it releases: 1, 0, or -1 on error (also where `v` is NULL, with
 * the error of whatever failed to give it). True and False are answered without a call. */
static inline int
truth_released(PyObject *v)
{
    if (v == NULL)
        return -1;
    int r = v == Py_True ? 1 : v == Py_False ? 0 : PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

/* bool(local.name): 1, 0, or -1 on error. */
static inline int
thread_local_true(ThreadLocal *tl, PyObject *name)
{
    return truth_released(thread_local_get(tl, name));
}

/* local.name = value with the pending exception, if any, kept (see setattr_keeping_error). */
static inline int
thread_local_set_keeping_error(ThreadLocal *tl, PyObject *name, PyObject *value)
{
    PyObject *type, *val, *tb;
    PyErr_Fetch(&type, &val, &tb);
    if (thread_local_set(tl, name, value) < 0) {
        Py_XDECREF(type);
        Py_XDECREF(val);
        Py_XDECREF(tb);
        return -1;
    }
    PyErr_Restore(type, val, tb);
    return 0;
}

/* cls.name for a class (a new reference, or NULL with an error): what type's getattr finds, read from the
 * class's method cache where its metaclass is `type`, the name is none of type's own attributes and the
 * value found is a plain value or a Python function (which a class gives back as it is); anything else
 * (a descriptor, another metaclass) goes through getattr. Class-level switches (Anomaly.enabled,
 * Observation.active) and a node class's methods are read this way, once or more per node. */
static inline PyObject *
class_attr(PyObject *cls, PyObject *name)
{
    if (PyType_CheckExact(cls) && _PyType_Lookup(&PyType_Type, name) == NULL) {
        PyObject *v = _PyType_Lookup((PyTypeObject *)cls, name);  /* borrowed */
        if (v != NULL && (Py_TYPE(v)->tp_descr_get == NULL || PyFunction_Check(v)))
            return Py_NewRef(v);
    }
    return PyObject_GetAttr(cls, name);
}

/* bool(cls.name): 1, 0, or -1 on error. */
static inline int
class_attr_true(PyObject *cls, PyObject *name)
{
    return truth_released(class_attr(cls, name));
}

/* 1, 0 or -1 (error): is the attribute `name` of `obj` true? */
static inline int
attr_true(PyObject *obj, PyObject *name)
{
    return truth_released(PyObject_GetAttr(obj, name));
}

/* obj.name() (a new reference, or NULL with an error), as PyObject_CallMethodNoArgs. Where the
 * method is a C method of obj's type that no instance attribute can hide (no instance dict, the
 * generic attribute lookup), its C function is called directly, as the method object would call
 * it: a lock's acquire (METH_VARARGS | METH_KEYWORDS, with no arguments) or release (METH_NOARGS)
 * without the look-up of the method, the call's arguments and its trampoline, which cost about
 * as much as the locking itself (the engine takes its GraphTask's lock once per node). */
static inline PyObject *
call_method_noargs(PyObject *obj, PyObject *name)
{
    PyTypeObject *type = Py_TYPE(obj);
    if (type->tp_dictoffset == 0 && type->tp_getattro == PyObject_GenericGetAttr) {
        PyObject *descr = _PyType_Lookup(type, name);  /* borrowed */
        if (descr != NULL && Py_IS_TYPE(descr, &PyMethodDescr_Type)) {
            PyMethodDef *def = ((PyMethodDescrObject *)descr)->d_method;
            if (def->ml_flags == METH_NOARGS) {
                if (Py_EnterRecursiveCall(" while calling a Python object"))
                    return NULL;
                PyObject *r = def->ml_meth(obj, NULL);
                Py_LeaveRecursiveCall();
                return r;
            }
            if (def->ml_flags == (METH_VARARGS | METH_KEYWORDS)) {
                PyObject *args = PyTuple_New(0);  /* the empty tuple: no allocation */
                if (args == NULL)
                    return NULL;
                PyObject *r = NULL;
                if (!Py_EnterRecursiveCall(" while calling a Python object")) {
                    r = ((PyCFunctionWithKeywords)(void (*)(void))def->ml_meth)(obj, args, NULL);
                    Py_LeaveRecursiveCall();
                }
                Py_DECREF(args);
                return r;
            }
        }
    }
    return PyObject_CallMethodNoArgs(obj, name);
}

/* Calls obj.name() with the pending exception, if any, set aside and restored afterwards (a
 * lock's release on an error path). Returns -1, with the call's own error, if the call fails. */
static inline int
call_keeping_error(PyObject *obj, PyObject *name)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *r = call_method_noargs(obj, name);
    if (r == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    Py_DECREF(r);
    PyErr_Restore(type, value, tb);
    return 0;
}

/* obj.name = value with the pending exception, if any, kept; as call_keeping_error. */
static inline int
setattr_keeping_error(PyObject *obj, PyObject *name, PyObject *value)
{
    PyObject *type, *val, *tb;
    PyErr_Fetch(&type, &val, &tb);
    if (PyObject_SetAttr(obj, name, value) < 0) {
        Py_XDECREF(type);
        Py_XDECREF(val);
        Py_XDECREF(tb);
        return -1;
    }
    PyErr_Restore(type, val, tb);
    return 0;
}

#endif
