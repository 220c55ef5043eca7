/* The common case of an op call in C: an optional accelerator of the generated code of ops/_codegen.py.
 * See Note [The compiled op call] in ops/_compiled.py for why it exists; this comment says what it does.
 *
 * call(spec, *args) runs one call of a single-output op the way the generated Python
 * function does: it checks the tensor arguments, runs the op's NumPy forward, wraps the result,
 * and when grad mode records it, builds the node with its edges, input metadata and saved
 * values. spec is the OpSpec tuple ops/_compiled.py (compiled_spec) builds from the op's tables.
 * An op of several outputs (spec's multi_output) runs the same checks and forward, then
 * call_multi, which re-states run_op in ops/_call.py for a tuple of results.
 *
 * View ops link their result to its base as _mark_views does (mark_view below; anything but
 * the plain case goes to _mark_views itself). It handles only the plain case: every tensor
 * argument on the CPU, all of one dtype where the op promotes, no view whose base changed in place
 * since it was made, no view that requires grad only through its base while grad mode records (a
 * dead edge, Note [The autograd state of views]), and no inference tensor argument where an
 * argument requires grad. For anything else (such a view, another device, mixed dtypes for a
 * promoting op, a Python int that overflows the array's dtype) it
 * returns None before doing anything visible, and the generated Python function, which handles
 * every case, runs the call instead. In inference mode it makes inference tensors and records
 * nothing (Note [Inference tensors]). Python objects do the rest as in the Python function: the
 * forward, dtype promotion, SavedTensor, leaf edges (gradient_edge), anomaly traces.
 */
#define PY_SSIZE_T_CLEAN
#include "_capi.h"

/* What configure(ns) binds: the Python classes, functions and values the call works with, each
 * by the name of its attribute in the namespace that retrograd/_C/_configure.py builds. */
static PyTypeObject *Tensor_type, *Parameter_type, *Edge_type, *VersionCounter_type;
static PyObject *Node_cls, *OpNode_cls, *np_module, *ndarray_type, *cpu_device, *grad_state, *Anomaly_cls,
    *next_sequence_nr;
static PyObject *SavedTensor_cls, *gradient_edge_fn, *record_trace_fn, *promote_fn, *describe_fn;
static PyObject *nothing_saved, *float_dtypes, *asarray_fn, *zero, *mark_views_fn, *empty_tuple;
static PyObject *saved_hooks_state, *AccumulateGrad_cls, *accumulator_lock, *rlock_fn, *max_sequence_nr;
static PyObject *InferenceCensus_cls, *census, *inference_counter, *InferenceVC_cls, *view_default, *view_no_grad,
    *view_inference, *view_multi;
static PyObject *fp_state, *fp_quiet;  /* See Note [NumPy's floating-point warnings] in backends/numpy_backend.py */
static int fp_contextvar = 0;  /* fp_state is a ContextVar, which this code sets; else every call goes to Python */
static int configured = 0;
static ThreadLocal grad_tl, hooks_tl;  /* grad_state and saved_hooks_state: see ThreadLocal in _capi.h */
static int enabled = 1;  /* set_enabled(False): every call goes to the Python function (tests compare the two) */
static PyObject *wide_dtype = NULL;  /* set_wide_dtype(dt): NumPy's bfloat16 dtype once loaded; a call with an array
                                     * of it, or the bfloat16 argument, goes to Python (Note [bfloat16 arrays] in
                                     * _dtype.py) */
static PyObject *bfloat16_dtype;
static int interposed = 0;  /* set_interposed(True): interposers are active, every call goes to Python (Note [Op call
                             * interposition] in ops/_call.py) */

static const Binding bindings[] = {
    {"Tensor", (PyObject **)&Tensor_type, BIND_TYPE},
    {"Parameter", (PyObject **)&Parameter_type, BIND_TYPE},
    {"Node", &Node_cls, BIND_TYPE},
    {"OpNode", &OpNode_cls, BIND_TYPE},
    {"Edge", (PyObject **)&Edge_type, BIND_TUPLE_TYPE},
    {"VersionCounter", (PyObject **)&VersionCounter_type, BIND_TYPE},
    {"SavedTensor", &SavedTensor_cls, BIND_TYPE},
    {"AccumulateGrad", &AccumulateGrad_cls, BIND_TYPE},
    {"RLock", &rlock_fn, BIND_TYPE},
    {"numpy", &np_module, BIND_ANY},
    {"cpu", &cpu_device, BIND_ANY},
    {"grad_state", &grad_state, BIND_ANY},
    {"Anomaly", &Anomaly_cls, BIND_ANY},
    {"saved_hooks_state", &saved_hooks_state, BIND_ANY},
    {"accumulator_lock", &accumulator_lock, BIND_ANY},
    {"next_sequence_nr", &next_sequence_nr, BIND_CALLABLE},
    {"gradient_edge", &gradient_edge_fn, BIND_CALLABLE},
    {"record_forward_trace", &record_trace_fn, BIND_CALLABLE},
    {"promote", &promote_fn, BIND_CALLABLE},
    {"describe", &describe_fn, BIND_CALLABLE},
    {"mark_views", &mark_views_fn, BIND_CALLABLE},
    {"nothing_saved", &nothing_saved, BIND_ANY},
    {"float_dtypes", &float_dtypes, BIND_ANY},
    {"bfloat16", &bfloat16_dtype, BIND_ANY},
    {"MAX_SEQUENCE_NR", &max_sequence_nr, BIND_ANY},
    {"InferenceCensus", &InferenceCensus_cls, BIND_TYPE},
    {"inference_census", &census, BIND_ANY},
    {"INFERENCE_COUNTER", &inference_counter, BIND_ANY},
    {"InferenceVersionCounter", &InferenceVC_cls, BIND_TYPE},
    {"VIEW_DEFAULT", &view_default, BIND_ANY},
    {"VIEW_NO_GRAD_MODE", &view_no_grad, BIND_ANY},
    {"VIEW_INFERENCE_MODE", &view_inference, BIND_ANY},
    {"VIEW_MULTI_OUTPUT_NODE", &view_multi, BIND_ANY},
    {"FP_STATE", &fp_state, BIND_ANY},
    {"FP_QUIET", &fp_quiet, BIND_ANY},
};
#define N_BINDINGS ((int)(sizeof(bindings) / sizeof(bindings[0])))

static PyObject *s_dtype, *s_shape, *s_grad_enabled, *s_enabled, *s_forward, *s_version, *s_base,
    *s_version_counter, *s_hooks, *s_acquire, *s_release, *s_inference, *s_grad_dtype, *s_torch_function;

/* The attributes the call reads or calls by name, with the objects it reads them on (see the
 * same table in _engine_loop.c). */
static const Interned interned[] = {
    {&s_dtype, "dtype", "ndarray"}, {&s_shape, "shape", "ndarray"}, {&s_base, "base", "ndarray"},
    {&s_grad_enabled, "grad_enabled", "grad_state"}, {&s_enabled, "enabled", "Anomaly"},
    {&s_forward, "forward", "OpInfo"}, {&s_version, "version", "VersionCounter"},
    {&s_version_counter, "_version_counter", "Tensor"}, {&s_hooks, "hooks", "saved_hooks_state"},
    {&s_acquire, "acquire", "lock"}, {&s_release, "release", "lock"}, {&s_inference, "inference", "grad_state"},
    {&s_grad_dtype, "_grad_dtype", "Tensor"}, {&s_torch_function, "__torch_function__", "Tensor"},
};
#define N_INTERNED ((int)(sizeof(interned) / sizeof(interned[0])))

static Py_ssize_t t_off[T_COUNT];  /* see tensor_fields in _capi.h */
static Py_ssize_t st_off[ST_COUNT];  /* SavedTensor's, see st_fields in _capi.h */
static Py_ssize_t n_off[N_COUNT];  /* Node's, see node_fields in _capi.h */
enum { ACC_VARIABLE, ACC_LOCK, ACC_COUNT };
static const char *const acc_fields[ACC_COUNT] = {"_variable", "lock"};
static Py_ssize_t acc_off[ACC_COUNT];
static const char *const opnode_fields[] = {"_saved"};
static Py_ssize_t opnode_off[1];
static const char *const vc_fields[] = {"version"};
static Py_ssize_t vc_off[1];
static const char *const census_fields[] = {"threads"};
static Py_ssize_t census_off[1];
#define off_saved opnode_off[0]
#define off_version vc_off[0]
#define off_acc_variable acc_off[ACC_VARIABLE]
#define off_acc_lock acc_off[ACC_LOCK]

static const FieldTable field_tables[] = {
    {"Tensor", tensor_fields, T_COUNT, t_off},
    {"SavedTensor", st_fields, ST_COUNT, st_off},
    {"Node", node_fields, N_COUNT, n_off},
    {"AccumulateGrad", acc_fields, ACC_COUNT, acc_off},
    {"OpNode", opnode_fields, 1, opnode_off},
    {"VersionCounter", vc_fields, 1, vc_off},
    {"InferenceCensus", census_fields, 1, census_off},
};
#define N_FIELD_TABLES ((int)(sizeof(field_tables) / sizeof(field_tables[0])))

/* The spec tuple's fields, in the order of OpSpec in ops/_compiled.py. */
enum { S_OP, S_TENSOR_POS, S_PROMOTE, S_DIFFERENTIABLE, S_NODE_CLS, S_FORMULA_POS, S_SAVES,
       S_NONDIFF_OUTPUT, S_VIEW, S_KERNEL, S_UFUNC, S_NODE_EDGES, S_MULTI_OUTPUT, S_COUNT };
static const char *const spec_fields[S_COUNT] = {
    "op", "tensor_pos", "promote", "differentiable", "node_cls", "formula_pos", "saves", "nondiff_output", "view",
    "kernel", "ufunc", "node_edges", "multi_output"};
/* The fields of the other tuples the call reads by position. */
static const char *const save_fields[] = {"kind", "position", "users", "suffix"};
static const char *const kernel_fields[] = {"forward", "kernel", "kwonly"};
static const char *const ufunc_fields[] = {"forward", "ufunc", "nargs", "when"};
static const char *const input_metadata_fields[] = {"shape", "dtype", "device"};
static const char *const view_link_fields[] = {"op", "rest", "output"};

static void metas_cache_clear(void);

/* configure(ns): binds what the call works with from the namespace `ns` (see bindings above)
 * and reads the classes' slot offsets; the call declines every call until it has succeeded. */
static PyObject *
configure(PyObject *module, PyObject *ns)
{
    configured = 0;
    if (bind_all(ns, bindings, N_BINDINGS) < 0 || field_tables_init(ns, field_tables, N_FIELD_TABLES) < 0)
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)AccumulateGrad_cls, (PyTypeObject *)Node_cls)) {
        PyErr_SetString(PyExc_TypeError, "configure: AccumulateGrad must be a Node type");
        return NULL;
    }
    if (!PyObject_TypeCheck(census, (PyTypeObject *)InferenceCensus_cls)) {
        PyErr_SetString(PyExc_TypeError, "configure: inference_census must be an InferenceCensus");
        return NULL;
    }
    if (array_head_init(np_module) < 0)
        return NULL;
    Py_XSETREF(ndarray_type, PyObject_GetAttrString(np_module, "ndarray"));
    Py_XSETREF(asarray_fn, PyObject_GetAttrString(np_module, "asarray"));
    if (ndarray_type == NULL || asarray_fn == NULL)
        return NULL;
    metas_cache_clear();
    fp_contextvar = PyContextVar_CheckExact(fp_state);
    PyObject *grad_names[] = {s_grad_enabled, s_inference}, *hooks_names[] = {s_hooks};
    if (thread_local_init(&grad_tl, grad_state, grad_names, 2) < 0 ||
        thread_local_init(&hooks_tl, saved_hooks_state, hooks_names, 1) < 0)
        return NULL;
    configured = 1;
    Py_RETURN_NONE;
}

static const TupleTable tuple_tables[] = {
    {"spec", spec_fields, S_COUNT}, {"save", save_fields, 4}, {"kernel", kernel_fields, 3},
    {"ufunc_form", ufunc_fields, 4}, {"input_metadata", input_metadata_fields, 3}, {"view_link", view_link_fields, 3},
};
#define N_TUPLE_TABLES ((int)(sizeof(tuple_tables) / sizeof(tuple_tables[0])))

/* layout(): what the call reads of the Python objects, for tests/test_compiled_layout.py. */
static PyObject *
layout(PyObject *module, PyObject *unused)
{
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "layout(): the op call is not configured");
        return NULL;
    }
    PyObject *out = layout_report(bindings, N_BINDINGS, field_tables, N_FIELD_TABLES, tuple_tables, N_TUPLE_TABLES,
                                  interned, N_INTERNED);
    if (out != NULL && array_layout_report(out) < 0)
        Py_CLEAR(out);
    return out;
}

static PyObject *
is_configured(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(configured);
}

/* set_enabled(flag): whether OpFunctions and call() run in C; off, each call goes to Python. */
static PyObject *
set_enabled(PyObject *module, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0)
        return NULL;
    enabled = on;
    Py_RETURN_NONE;
}

/* set_wide_dtype(dt): the NumPy dtype of bfloat16, whose calls go to Python (Note [bfloat16 arrays] in _dtype.py). */
static PyObject *
set_wide_dtype(PyObject *module, PyObject *dt)
{
    Py_XSETREF(wide_dtype, Py_NewRef(dt));
    Py_RETURN_NONE;
}

/* set_interposed(flag): whether an interposer is active, so that every call goes to Python. */
static PyObject *
set_interposed(PyObject *module, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0)
        return NULL;
    interposed = on;
    Py_RETURN_NONE;
}

static PyObject *
is_enabled(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(enabled && configured);
}

static PyObject *input_metadata(PyObject *out, PyObject *out_dtype);

/* The AccumulateGrad of a CPU leaf that has no live one: grad_accumulator() in _tensor.py for
 * that case. It makes the node with the fields AccumulateGrad.__init__ sets, and the leaf holds
 * it through a weak reference, both under the lock the Python function takes. Returns a new
 * reference to the node; None (new reference) where the Python function must do it: the lock
 * is busy (that function waits for it), anomaly mode records a trace, the leaf is not on the
 * CPU, or its grad_dtype was set (Note [grad_dtype] in autograd/variable.py). */
static PyObject *
leaf_accumulator(PyObject *tensor)
{
    PyObject *data = slot(tensor, t_off[T_DATA]);
    int anomaly = class_attr_true(Anomaly_cls, s_enabled);
    if (anomaly < 0)
        return NULL;
    if (anomaly || data == NULL || slot(tensor, t_off[T_DEVICE]) != cpu_device)
        return Py_NewRef(Py_None);
    PyObject *unset = PyObject_GetAttr((PyObject *)Py_TYPE(tensor), s_grad_dtype);  /* the class's value */
    PyObject *wanted = unset == NULL ? NULL : PyObject_GetAttr(tensor, s_grad_dtype);
    int set = wanted != unset;  /* compared as identities: both live on as long as the class does */
    Py_XDECREF(unset);
    if (wanted == NULL)
        return NULL;
    Py_DECREF(wanted);
    if (set)
        return Py_NewRef(Py_None);
    PyObject *got = PyObject_CallMethodOneArg(accumulator_lock, s_acquire, Py_False);
    if (got == NULL)
        return NULL;
    Py_DECREF(got);
    if (got != Py_True)
        return Py_NewRef(Py_None);
    PyObject *acc = NULL, *ref = slot(tensor, t_off[T_GRAD_ACC]);
    if (ref != NULL && PyWeakref_CheckRef(ref)) {  /* made by another thread since the caller looked */
        acc = PyObject_CallNoArgs(ref);
        if (acc == NULL || acc != Py_None)
            goto release;
        Py_CLEAR(acc);
    }
    PyObject *dtype = array_dtype(data), *metas = NULL, *variable = NULL, *lock = NULL;
    if (dtype == NULL || (metas = input_metadata(data, dtype)) == NULL ||
        (variable = PyWeakref_NewRef(tensor, NULL)) == NULL || (lock = PyObject_CallNoArgs(rlock_fn)) == NULL)
        goto done;
    PyTypeObject *type = (PyTypeObject *)AccumulateGrad_cls;
    if ((acc = type->tp_alloc(type, 0)) == NULL)
        goto done;
    set_node_fields(acc, n_off, empty_tuple, max_sequence_nr, metas);
    set_slot(acc, off_acc_variable, variable);
    set_slot(acc, off_acc_lock, lock);
    PyObject *own = PyWeakref_NewRef(acc, NULL);
    if (own == NULL) {
        Py_CLEAR(acc);
        goto done;
    }
    set_slot(tensor, t_off[T_GRAD_ACC], own);
    Py_DECREF(own);
done:
    Py_XDECREF(dtype);
    Py_XDECREF(metas);
    Py_XDECREF(variable);
    Py_XDECREF(lock);
release:
    if (call_keeping_error(accumulator_lock, s_release) < 0)
        Py_CLEAR(acc);
    return acc;
}

/* The edge a gradient for formula input `arg` flows along, or None. */
static PyObject *
edge_of(PyObject *arg)
{
    if (!PyObject_TypeCheck(arg, Tensor_type) || slot(arg, t_off[T_REQUIRES_GRAD]) != Py_True)
        return Py_NewRef(Py_None);
    PyObject *fn = slot(arg, t_off[T_GRAD_FN]), *nr = slot(arg, t_off[T_OUTPUT_NR]);
    if (fn == NULL || nr == NULL || slot(arg, t_off[T_BASE]) != Py_None)
        return PyObject_CallOneArg(gradient_edge_fn, arg);  /* a view (or something unusual) */
    if (fn == Py_None) {  /* a leaf: its live AccumulateGrad, through the weak reference it keeps */
        PyObject *ref = slot(arg, t_off[T_GRAD_ACC]);
        fn = ref != NULL && PyWeakref_CheckRef(ref) ? PyObject_CallNoArgs(ref) : Py_NewRef(Py_None);
        if (fn == NULL)
            return NULL;
        if (fn == Py_None) {  /* none yet, or freed: a new one */
            Py_DECREF(fn);
            if ((fn = leaf_accumulator(arg)) == NULL)
                return NULL;
            if (fn == Py_None) {
                Py_DECREF(fn);
                return PyObject_CallOneArg(gradient_edge_fn, arg);
            }
        }
        nr = zero;
    } else {
        Py_INCREF(fn);
    }
    PyObject *edge = Edge_type->tp_alloc(Edge_type, 2);
    if (edge == NULL) {
        Py_DECREF(fn);
        return NULL;
    }
    PyTuple_SET_ITEM(edge, 0, fn);  /* steals the reference taken above */
    PyTuple_SET_ITEM(edge, 1, Py_NewRef(nr));
    return edge;
}

/* tensor._version_counter: the tensor's counter, created on first use as the property does.
 * Nothing can run between the second look at the slot and the store, so two threads never
 * give one tensor two counters. Returns a new reference. */
static PyObject *
version_counter(PyObject *tensor)
{
    PyObject *vc = slot(tensor, t_off[T_VC]);
    if (vc != NULL && vc != Py_None)
        return Py_NewRef(vc);
    PyObject *fresh = VersionCounter_type->tp_alloc(VersionCounter_type, 0);
    if (fresh == NULL)
        return NULL;
    set_slot(fresh, off_version, zero);
    vc = slot(tensor, t_off[T_VC]);  /* allocating may have run other threads */
    if (vc != NULL && vc != Py_None) {
        Py_DECREF(fresh);
        return Py_NewRef(vc);
    }
    set_slot(tensor, t_off[T_VC], fresh);
    return fresh;
}

/* counter.version */
static PyObject *
version_of(PyObject *vc)
{
    PyObject *v = PyObject_TypeCheck(vc, VersionCounter_type) ? slot(vc, off_version) : NULL;
    return v != NULL ? Py_NewRef(v) : PyObject_GetAttr(vc, s_version);
}

/* SavedTensor(tensor, is_output) for the plain case, with the fields SavedTensor.__init__ sets:
 * no saved-tensor hooks, and the tensor's graph edge at hand (its grad_fn, or a leaf's live
 * AccumulateGrad); an input with a weak reference to itself. Anything else calls the class. */
static PyObject *
new_saved(PyObject *tensor, int is_output)
{
    PyObject *hooks = thread_local_get(&hooks_tl, s_hooks);
    if (hooks == NULL)
        return NULL;
    int any = PyObject_IsTrue(hooks);
    Py_DECREF(hooks);
    if (any < 0)
        return NULL;
    PyObject *requires_grad = slot(tensor, t_off[T_REQUIRES_GRAD]), *grad_fn = slot(tensor, t_off[T_GRAD_FN]);
    PyObject *output_nr = slot(tensor, t_off[T_OUTPUT_NR]), *device = slot(tensor, t_off[T_DEVICE]);
    PyObject *data = slot(tensor, t_off[T_DATA]), *edge_node = NULL, *original = NULL;
    if (any || requires_grad == NULL || grad_fn == NULL || output_nr == NULL || device == NULL || data == NULL)
        return PyObject_CallFunctionObjArgs(SavedTensor_cls, tensor, is_output ? Py_True : Py_False, NULL);
    if (is_output || requires_grad != Py_True) {
        edge_node = Py_NewRef(Py_None);
    } else if (grad_fn != Py_None) {
        edge_node = Py_NewRef(grad_fn);
    } else {  /* a leaf: its accumulator, if it has a live one */
        PyObject *ref = slot(tensor, t_off[T_GRAD_ACC]);
        edge_node = ref != NULL && PyWeakref_CheckRef(ref) ? PyObject_CallNoArgs(ref) : Py_NewRef(Py_None);
        if (edge_node == NULL)
            return NULL;
        if (edge_node == Py_None) {
            Py_DECREF(edge_node);
            return PyObject_CallFunctionObjArgs(SavedTensor_cls, tensor, is_output ? Py_True : Py_False, NULL);
        }
    }
    if (!is_output && (original = PyWeakref_NewRef(tensor, NULL)) == NULL) {  /* Note [Saved tensors and their hooks] */
        Py_DECREF(edge_node);
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)SavedTensor_cls;
    PyObject *vc = version_counter(tensor), *version = vc ? version_of(vc) : NULL;
    PyObject *saved = version ? type->tp_alloc(type, 0) : NULL;
    if (saved != NULL) {
        set_slot(saved, st_off[ST_IS_OUTPUT], is_output ? Py_True : Py_False);
        set_slot(saved, st_off[ST_OUTPUT_NR], output_nr);
        set_slot(saved, st_off[ST_REQUIRES_GRAD], requires_grad);
        set_slot(saved, st_off[ST_DEVICE], device);
        set_slot(saved, st_off[ST_RELEASED], Py_False);
        set_slot(saved, st_off[ST_IS_LEAF], grad_fn == Py_None ? Py_True : Py_False);
        set_slot(saved, st_off[ST_EDGE_NODE], edge_node);
        set_slot(saved, st_off[ST_UNPACK_HOOK], Py_None);
        set_slot(saved, st_off[ST_PACKED], Py_None);
        set_slot(saved, st_off[ST_ARRAY], data);
        set_slot(saved, st_off[ST_VERSION_COUNTER], vc);
        set_slot(saved, st_off[ST_SAVED_VERSION], version);
        set_slot(saved, st_off[ST_ORIGINAL], original != NULL ? original : Py_None);
    }
    Py_DECREF(edge_node);
    Py_XDECREF(original);
    Py_XDECREF(vc);
    Py_XDECREF(version);
    return saved;
}

/* One entry of the node's saved tuple; plan = (kind, position, edge mask, suffix). */
static PyObject *
saved_value(PyObject *plan, PyObject *const *args, PyObject *const *arrays, PyObject *res)
{
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(plan, 0));
    Py_ssize_t pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(plan, 1));
    if (PyErr_Occurred())
        return NULL;
    if (kind == 1)  /* the result */
        return new_saved(res, 1);
    PyObject *arg = args[pos];
    if (kind == 0)  /* an argument: a SavedTensor for a tensor, else the value itself */
        return PyObject_TypeCheck(arg, Tensor_type) ? new_saved(arg, 0) : Py_NewRef(arg);
    if (kind == 3) {  /* a sequence of saved_lists: save_list, a list with a SavedTensor per tensor */
        if (!PyTuple_CheckExact(arg) && !PyList_CheckExact(arg))
            return Py_NewRef(arg);
        Py_ssize_t n = PySequence_Fast_GET_SIZE(arg);
        PyObject *list = PyList_New(n);
        for (Py_ssize_t i = 0; list != NULL && i < n; i++) {
            PyObject *item = PySequence_Fast_GET_ITEM(arg, i);
            PyObject *value = PyObject_TypeCheck(item, Tensor_type) ? new_saved(item, 0) : Py_NewRef(item);
            if (value == NULL)
                Py_CLEAR(list);
            else
                PyList_SET_ITEM(list, i, value);
        }
        return list;
    }
    /* an argument's shape, dtype or device: _describe, which the first two cases re-state */
    PyObject *suffix = PyTuple_GET_ITEM(plan, 3);
    int is_tensor = PyObject_TypeCheck(arg, Tensor_type);
    if (PyUnicode_Check(suffix) && PyUnicode_CompareWithASCIIString(suffix, "shape") == 0)
        return is_tensor ? PyObject_GetAttr(arrays[pos], s_shape) : Py_NewRef(empty_tuple);
    if (PyUnicode_Check(suffix) && PyUnicode_CompareWithASCIIString(suffix, "device") == 0)
        return Py_NewRef(is_tensor ? slot(arg, t_off[T_DEVICE]) : cpu_device);
    return PyObject_CallFunctionObjArgs(describe_fn, suffix, arg, arrays[pos], Py_False, NULL);
}

/* The call's arguments as a tuple, for the Python helpers that take them so. */
static PyObject *
args_tuple(PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *t = PyTuple_New(nargs);
    if (t != NULL)
        for (Py_ssize_t i = 0; i < nargs; i++)
            PyTuple_SET_ITEM(t, i, Py_NewRef(args[i]));
    return t;
}

/* Whether tensor t is an inference tensor: its counter is an InferenceVersionCounter (Tensor.is_inference). */
static int
is_inference(PyObject *t)
{
    PyObject *vc = slot(t, t_off[T_VC]);
    return vc == inference_counter || (vc != NULL && PyObject_TypeCheck(vc, (PyTypeObject *)InferenceVC_cls));
}

/* _mark_views(op, args, (res,)) for a single-output view op whose result NumPy made as a view
 * of the first argument's array (or of that array's base): the result shares the argument's
 * version counter and records how to replay the view on its base and how it was made
 * (new_view_creation in autograd/variable.py, for a single output; `inference`: in inference
 * mode); a view of an inference tensor is an inference tensor, not linked. Anything else (NumPy
 * copied, or the memory is related some other way) goes to _mark_views. Returns -1 on error. */
static int
mark_view(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *res, PyObject *out, int inference)
{
    PyObject *src = args[0], *src_data = PyObject_TypeCheck(src, Tensor_type) ? slot(src, t_off[T_DATA]) : NULL;
    PyObject *owner = array_base(out), *src_owner = NULL, *vc = NULL, *version = NULL;
    PyObject *rest = NULL, *entry = NULL, *view_fn = NULL;
    int rc = -1;
    if (owner == NULL)
        return -1;
    if (owner == Py_None) {  /* NumPy copied: not a view */
        Py_DECREF(owner);
        return 0;
    }
    if (src_data != NULL && owner != src_data && (src_owner = array_base(src_data)) == NULL)
        goto done;
    PyObject *base = src_data == NULL ? NULL : slot(src, t_off[T_BASE]);
    PyObject *chain = base == NULL || base == Py_None ? empty_tuple : slot(src, t_off[T_VIEW_FN]);
    PyObject *prev = base == NULL || base == Py_None ? view_default : slot(src, t_off[T_VIEW_CREATION]);
    if (src_data == NULL || (owner != src_data && owner != src_owner) || base == NULL || chain == NULL ||
        !PyTuple_CheckExact(chain) || prev == NULL) {  /* not the plain case: the Python function decides */
        PyObject *call_args = args_tuple(args, nargs), *results = PyTuple_Pack(1, res), *r = NULL;
        if (call_args != NULL && results != NULL)
            r = PyObject_CallFunctionObjArgs(mark_views_fn, op, call_args, results, NULL);
        Py_XDECREF(call_args);
        Py_XDECREF(results);
        rc = r == NULL ? -1 : 0;
        Py_XDECREF(r);
        goto done;
    }
    if (is_inference(src)) {  /* a view of an inference tensor: one too, not linked */
        set_slot(res, t_off[T_VC], inference_counter);
        rc = 0;
        goto done;
    }
    if ((vc = version_counter(src)) == NULL || (version = version_of(vc)) == NULL ||
        (rest = args_tuple(args + 1, nargs - 1)) == NULL ||
        (entry = PyTuple_Pack(3, op, rest, Py_None)) == NULL)
        goto done;
    Py_ssize_t n = PyTuple_GET_SIZE(chain);
    if ((view_fn = PyTuple_New(n + 1)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(view_fn, i, Py_NewRef(PyTuple_GET_ITEM(chain, i)));
    PyTuple_SET_ITEM(view_fn, n, Py_NewRef(entry));
    int grad_on = inference ? 0 : thread_local_true(&grad_tl, s_grad_enabled);
    if (grad_on < 0)
        goto done;
    /* a view's creation: inference mode's, else the source's with grad mode on, else no_grad's
     * (an inference-mode source's stays) */
    PyObject *creation = inference ? view_inference : grad_on ? prev : prev == view_inference ? prev : view_no_grad;
    set_slot(res, t_off[T_BASE], base == Py_None ? src : base);
    set_slot(res, t_off[T_VC], vc);
    set_slot(res, t_off[T_VIEW_FN], view_fn);
    set_slot(res, t_off[T_VIEW_VERSION], version);
    set_slot(res, t_off[T_VIEW_CREATION], creation);
    rc = 0;
done:
    Py_DECREF(owner);
    Py_XDECREF(src_owner);
    Py_XDECREF(vc);
    Py_XDECREF(version);
    Py_XDECREF(rest);
    Py_XDECREF(entry);
    Py_XDECREF(view_fn);
    return rc;
}

/* The node's input_metadata, ((shape, dtype, None),), for a result array. Nodes of results of
 * one shape and dtype share one (immutable) tuple: three objects fewer per recorded op for the
 * garbage collector to count and scan. The cache is a dict per dtype object, keyed by shape, found
 * by the dtype's identity: a NumPy dtype hashes and compares slowly (a (shape, dtype) key cost
 * about 600 instructions a look-up), and an array's dtype is almost always one of a few shared
 * objects. Each entry holds its dtype, so an identity is never reused while it is cached; a dict
 * is cleared when it grows past a bound, and every one when more dtypes come than there are slots.
 * The last tuple found for a dtype is tried first, its shape compared with the array's dimensions. */
#define METAS_DTYPES 8
static PyObject *metas_dtype[METAS_DTYPES], *metas_by_shape[METAS_DTYPES], *metas_last[METAS_DTYPES];

static void
metas_cache_clear(void)
{
    for (int i = 0; i < METAS_DTYPES; i++) {
        Py_CLEAR(metas_dtype[i]);
        Py_CLEAR(metas_by_shape[i]);
        Py_CLEAR(metas_last[i]);
    }
}

static PyObject *
input_metadata(PyObject *out, PyObject *out_dtype)
{
    int i = 0;
    while (i < METAS_DTYPES && metas_dtype[i] != NULL && metas_dtype[i] != out_dtype)
        i++;
    if (i == METAS_DTYPES) {  /* every slot taken by another dtype: start again */
        metas_cache_clear();
        i = 0;
    }
    if (metas_dtype[i] == NULL) {
        PyObject *by_shape = PyDict_New();
        if (by_shape == NULL)
            return NULL;
        metas_dtype[i] = Py_NewRef(out_dtype);
        metas_by_shape[i] = by_shape;
    }
    PyObject *last = metas_last[i];  /* the dtype's last result shape, compared without making a tuple */
    if (last != NULL && array_direct(out)) {
        int same = array_shape_is(out, PyTuple_GET_ITEM(PyTuple_GET_ITEM(last, 0), 0));
        if (same != 0)
            return same < 0 ? NULL : Py_NewRef(last);
    }
    PyObject *by_shape = metas_by_shape[i];
    PyObject *shape = PyObject_GetAttr(out, s_shape), *metas = NULL;
    if (shape == NULL)
        return NULL;
    metas = PyDict_GetItemWithError(by_shape, shape);
    if (metas != NULL) {
        Py_INCREF(metas);
        goto done;
    }
    if (PyErr_Occurred())
        goto done;
    PyObject *meta = PyTuple_Pack(3, shape, out_dtype, Py_None);
    metas = meta ? PyTuple_Pack(1, meta) : NULL;
    Py_XDECREF(meta);
    if (metas == NULL)
        goto done;
    if (PyDict_GET_SIZE(by_shape) >= 512)
        PyDict_Clear(by_shape);
    if (PyDict_SetItem(by_shape, shape, metas) < 0)
        Py_CLEAR(metas);
done:
    Py_DECREF(shape);
    if (metas != NULL)
        Py_XSETREF(metas_last[i], Py_NewRef(metas));
    return metas;
}

/* Whether `obj` is an object no reference cycle can pass through: None, a bool, an int, a float
 * or a str, an object of a type the collector does not track (sum's DIM_UNSET, an object()), or a
 * tuple of those that is then dropped from the collector's tracking. */
static int
atomic(PyObject *obj, int depth)
{
    if (obj == Py_None || PyBool_Check(obj) || PyLong_CheckExact(obj) || PyFloat_CheckExact(obj) ||
        PyUnicode_CheckExact(obj) || !PyObject_IS_GC(obj))
        return 1;
    if (depth > 0 || !PyTuple_CheckExact(obj))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); i++)
        if (!atomic(PyTuple_GET_ITEM(obj, i), depth + 1))
            return 0;
    if (PyObject_GC_IsTracked(obj))
        PyObject_GC_UnTrack(obj);
    return 1;
}

/* Drops a node's saved tuple from the collector's tracking when it holds only atomic values (a
 * multiplier, a shape, flags): what the collector itself would do for such a tuple at its next
 * pass, done at once, so that the pass has fewer objects to look at. */
static void
untrack_if_atomic(PyObject *saved)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(saved); i++)
        if (!atomic(PyTuple_GET_ITEM(saved, i), 0))
            return;
    if (PyObject_GC_IsTracked(saved))
        PyObject_GC_UnTrack(saved);
}

#define MAX_ARGS 16
#define MAX_EDGES ((Py_ssize_t)(8 * sizeof(unsigned long)))  /* edges are counted in an unsigned long's bits */

/* 1 if `spec` has the form call() reads without checking (OpSpec's fields in ops/_compiled.py,
 * each of the type it is read as); 0 if not. OpFunction takes only such specs. */
static int
spec_is_plain(PyObject *spec)
{
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != S_COUNT)
        return 0;
    PyObject *tensor_pos = PyTuple_GET_ITEM(spec, S_TENSOR_POS), *formula_pos = PyTuple_GET_ITEM(spec, S_FORMULA_POS);
    PyObject *saves = PyTuple_GET_ITEM(spec, S_SAVES);
    if (!PyTuple_Check(tensor_pos) || !PyTuple_Check(formula_pos) || !PyTuple_Check(saves) ||
        PyTuple_GET_SIZE(formula_pos) > MAX_EDGES || !PyCallable_Check(PyTuple_GET_ITEM(spec, S_NODE_CLS)))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tensor_pos); i++)
        if (!PyLong_Check(PyTuple_GET_ITEM(tensor_pos, i)))
            return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(formula_pos); i++)
        if (!PyLong_Check(PyTuple_GET_ITEM(formula_pos, i)))
            return 0;
    PyObject *node_edges = PyTuple_GET_ITEM(spec, S_NODE_EDGES), *cls, *keep;
    if (node_edges != Py_None && !PyDict_CheckExact(node_edges))
        return 0;
    for (Py_ssize_t pos = 0; node_edges != Py_None && PyDict_Next(node_edges, &pos, &cls, &keep);) {
        if (!PyType_Check(cls) || !PyTuple_CheckExact(keep))  /* class: indices in formula_pos */
            return 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(keep); i++) {
            PyObject *k = PyTuple_GET_ITEM(keep, i);
            Py_ssize_t v = PyLong_Check(k) ? PyLong_AsSsize_t(k) : -1;
            if (v < 0 || v >= PyTuple_GET_SIZE(formula_pos)) {
                PyErr_Clear();
                return 0;
            }
        }
    }
    PyObject *multi = PyTuple_GET_ITEM(spec, S_MULTI_OUTPUT);  /* None, or the indices of nondiff outputs */
    if (multi != Py_None && !PyTuple_CheckExact(multi))
        return 0;
    for (Py_ssize_t i = 0; multi != Py_None && i < PyTuple_GET_SIZE(multi); i++)
        if (!PyLong_Check(PyTuple_GET_ITEM(multi, i)))
            return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(saves); i++) {
        PyObject *save = PyTuple_GET_ITEM(saves, i);
        if (!PyTuple_Check(save) || PyTuple_GET_SIZE(save) != 4 || !PyLong_Check(PyTuple_GET_ITEM(save, 0)) ||
            !PyLong_Check(PyTuple_GET_ITEM(save, 1)) || !PyLong_Check(PyTuple_GET_ITEM(save, 2)))
            return 0;
    }
    return 1;
}

/* For spec's S_UFUNC entry (forward, ufunc, n, when): n when `forward` (op.forward, as read for
 * this call) is the declared one and declared_args holds for the call's arguments, so that
 * ufunc(*arrays[:n]) is the forward's result; 0 otherwise, -1 on error. */
static Py_ssize_t
ufunc_args(PyObject *entry, PyObject *forward, PyObject *const *args, Py_ssize_t nargs)
{
    if (entry == Py_None)
        return 0;
    if (PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) == 4 && PyTuple_GET_ITEM(entry, 0) != forward)
        return 0;  /* op.forward was replaced: call what is there */
    return declared_args(entry, args, nargs);  /* which also checks the entry's form */
}

/* The quiet context of this thread, kept in its thread-state dict under fp_cache_key as a list [snapshot,
 * quiet]: `quiet` is a copy of the context `snapshot` with NumPy's error state set to FP_QUIET. A forward runs
 * inside `quiet` (PyContext_Enter, no allocation) while the thread's current context still equals `snapshot`
 * (the same variables with the same values: a Context compares its variables, at once where they are the very
 * same mapping), so each call costs a context copy from the free list and an identity check instead of the
 * three objects of a ContextVar set and reset. See Note [NumPy's floating-point warnings]. */
static PyObject *fp_cache_key;
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000
/* Where the thread left its quiet context last: the context it was in and CPython's count of the thread's context
 * changes (every ContextVar set or reset and every context entered or left adds one), so that the same context at
 * the same count proves nothing changed since and the quiet context is entered without a look-up. */
#define FP_FAST 1
static _Thread_local PyObject *fp_left_quiet;  /* borrowed: the thread-state dict's list owns it */
static _Thread_local PyObject *fp_left_for;    /* compared only */
static _Thread_local uint64_t fp_left_ver;
#endif

/* A new reference to the current thread's quiet context for the current context (see above), built where the
 * cache is missing or stale; NULL with an error set. */
static PyObject *
fp_quiet_context(void)
{
    PyObject *now = PyContext_CopyCurrent();
    if (now == NULL)
        return NULL;
    PyObject *tdict = PyThreadState_GetDict();  /* borrowed */
    PyObject *entry = tdict == NULL ? NULL : PyDict_GetItemWithError(tdict, fp_cache_key);  /* borrowed */
    if (entry == NULL && PyErr_Occurred())
        goto fail;
    if (entry != NULL && PyList_CheckExact(entry) && PyList_GET_SIZE(entry) == 2) {
        int same = PyObject_RichCompareBool(PyList_GET_ITEM(entry, 0), now, Py_EQ);
        if (same < 0)
            goto fail;
        if (same) {
            PyObject *quiet = Py_NewRef(PyList_GET_ITEM(entry, 1));
            PyList_SetItem(entry, 0, now);  /* steals `now`; the next compare finds the same mapping at once */
            return quiet;
        }
    }
    PyObject *quiet = PyContext_Copy(now);
    if (quiet == NULL)
        goto fail;
    if (PyContext_Enter(quiet) < 0) {
        Py_DECREF(quiet);
        goto fail;
    }
    PyObject *token = PyContextVar_Set(fp_state, fp_quiet);
    if (PyContext_Exit(quiet) < 0 || token == NULL) {
        Py_XDECREF(token);
        Py_DECREF(quiet);
        goto fail;
    }
    Py_DECREF(token);
    if (tdict != NULL) {
        PyObject *fresh = PyList_New(2);
        if (fresh == NULL) {
            Py_DECREF(quiet);
            goto fail;
        }
        PyList_SET_ITEM(fresh, 0, now);
        PyList_SET_ITEM(fresh, 1, Py_NewRef(quiet));
        int rc = PyDict_SetItem(tdict, fp_cache_key, fresh);
        Py_DECREF(fresh);
        if (rc < 0) {
            Py_DECREF(quiet);
            return NULL;
        }
        return quiet;
    }
    Py_DECREF(now);
    return quiet;
fail:
    Py_DECREF(now);
    return NULL;
}

/* Sets NumPy's error state to FP_QUIET for the forward: a token for fp_restore, which is Py_None where it already
 * is (inside a backward pass), the entered quiet context (see fp_quiet_context), or, where that context is already
 * entered (a forward's own op calls under a state it set), a ContextVar token; NULL with an error set. See Note
 * [NumPy's floating-point warnings]. */
static PyObject *
fp_quiet_on(void)
{
#ifdef FP_FAST
    PyThreadState *ts = PyThreadState_Get();
    if (fp_left_quiet != NULL && ts->context == fp_left_for && ts->context_ver == fp_left_ver) {
        if (PyContext_Enter(fp_left_quiet) == 0)
            return Py_NewRef(fp_left_quiet);
        PyErr_Clear();  /* entered further up: the look-up below finds the state quiet */
    }
#endif
    PyObject *current;
    if (PyContextVar_Get(fp_state, NULL, &current) < 0)
        return NULL;
    Py_XDECREF(current);  /* only compared: FP_QUIET stays bound here */
    if (current == fp_quiet)
        Py_RETURN_NONE;
    PyObject *quiet = fp_quiet_context();
    if (quiet == NULL)
        return NULL;
    if (PyContext_Enter(quiet) == 0)
        return quiet;
    Py_DECREF(quiet);
    if (!PyErr_ExceptionMatches(PyExc_RuntimeError))
        return NULL;
    PyErr_Clear();  /* already entered further up this thread's stack */
    return PyContextVar_Set(fp_state, fp_quiet);
}

/* Resets NumPy's error state set by fp_quiet_on (NULL: none was set), keeping any error being raised: 0, or -1
 * with an error set. */
static int
fp_restore(PyObject *token)
{
    if (token == NULL)
        return 0;
    if (token == Py_None) {
        Py_DECREF(token);
        return 0;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int rc;
    if (PyContext_CheckExact(token)) {
        rc = PyContext_Exit(token);
#ifdef FP_FAST
        PyThreadState *ts = PyThreadState_Get();
        /* only a context the thread-state dict's list still holds (that reference and this one): one that was
         * never cached, or was replaced while entered, is freed below */
        fp_left_quiet = rc == 0 && Py_REFCNT(token) > 1 ? token : NULL;
        fp_left_for = ts->context;
        fp_left_ver = ts->context_ver;
#endif
    } else {
        rc = PyContextVar_Reset(fp_state, token);
    }
    Py_DECREF(token);
    if (type != NULL) {
        if (rc < 0)
            PyErr_Clear();
        PyErr_Restore(type, value, tb);
    }
    return rc;
}

/* The node of a recorded call, as the first half of _make_node in ops/_call.py makes it: an edge
 * per formula input, the node class the op names, a sequence number, nothing saved yet and the
 * anomaly trace; the caller sets its input metadata and saved values. Returns a new reference;
 * Py_None (a new reference) where no formula input has an edge; NULL on error. `present_out`
 * gets bit k set for each formula input k with an edge. */
static PyObject *
new_node(PyObject *spec, PyObject *const *args, Py_ssize_t nargs, unsigned long *present_out)
{
    PyObject *formula_pos = PyTuple_GET_ITEM(spec, S_FORMULA_POS);
    Py_ssize_t n_edges = PyTuple_GET_SIZE(formula_pos);
    PyObject *edges = PyTuple_New(n_edges), *node = NULL;  /* at most MAX_EDGES: spec_is_plain checked */
    if (edges == NULL)
        return NULL;
    unsigned long present = 0;
    for (Py_ssize_t k = 0; k < n_edges; k++) {
        Py_ssize_t p = PyLong_AsSsize_t(PyTuple_GET_ITEM(formula_pos, k));
        PyObject *edge = p >= 0 && p < nargs ? edge_of(args[p]) : Py_NewRef(Py_None);
        if (edge == NULL)
            goto fail;
        PyTuple_SET_ITEM(edges, k, edge);
        if (edge != Py_None)
            present |= 1UL << k;
    }
    if (!present) {
        Py_DECREF(edges);
        return Py_NewRef(Py_None);
    }
    /* The node class, or OpInfo.node_class where the op names its node per call (Note [Node names
     * per call] in ops/_declarations.py): called as call_op calls it, on all the arguments. */
    PyObject *node_entry = PyTuple_GET_ITEM(spec, S_NODE_CLS), *chosen = NULL;
    if (!PyType_Check(node_entry)) {
        chosen = PyObject_Vectorcall(node_entry, args, nargs, NULL);
        if (chosen == NULL)
            goto fail;
        if (!PyType_Check(chosen)) {
            PyErr_Format(PyExc_TypeError, "node_class() returned %.100s, not a type", Py_TYPE(chosen)->tp_name);
            Py_DECREF(chosen);
            goto fail;
        }
    }
    PyTypeObject *node_cls = (PyTypeObject *)(chosen != NULL ? chosen : node_entry);
    PyObject *node_edges = PyTuple_GET_ITEM(spec, S_NODE_EDGES);
    if (chosen != NULL && node_edges != Py_None) {  /* a class that records some of the edges: those */
        PyObject *keep = PyDict_GetItemWithError(node_edges, chosen);  /* indices in range: spec_is_plain */
        PyObject *kept = keep == NULL ? NULL : PyTuple_New(PyTuple_GET_SIZE(keep));
        if (kept != NULL) {
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(keep); i++) {
                Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(keep, i));
                PyTuple_SET_ITEM(kept, i, Py_NewRef(PyTuple_GET_ITEM(edges, k)));
            }
            Py_SETREF(edges, kept);
        } else if (PyErr_Occurred()) {
            Py_DECREF(chosen);
            goto fail;
        }
    }
    node = node_cls->tp_alloc(node_cls, 0);
    Py_XDECREF(chosen);  /* the node holds its (heap) type; the op holds its classes */
    if (node == NULL)
        goto fail;
    PyObject *seq = PyObject_CallNoArgs(next_sequence_nr);
    if (seq == NULL)
        goto fail;
    set_node_fields(node, n_off, edges, seq, NULL);  /* the input metadata after the anomaly trace, as in Python */
    Py_DECREF(seq);
    set_slot(node, off_saved, nothing_saved);
    int anomaly = class_attr_true(Anomaly_cls, s_enabled);
    if (anomaly < 0)
        goto fail;
    if (anomaly) {
        PyObject *r = PyObject_CallOneArg(record_trace_fn, node);
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
    }
    Py_DECREF(edges);
    *present_out = present;
    return node;
fail:
    Py_XDECREF(node);
    Py_DECREF(edges);
    return NULL;
}

/* mark_views(op, args, results) for a view op of several outputs (split, unbind): as mark_view
 * above, for each output NumPy made as a view of the first argument's array (or of that array's
 * base), with the output's index in its view step and the creation new_view_creation gives a
 * multi-output op. Where any output's memory is related to the argument's some other way, or the
 * argument is not the plain case, mark_views itself links them all. Returns -1 on error. */
static int
mark_views_multi(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *results, int inference)
{
    PyObject *src = args[0], *src_data = PyObject_TypeCheck(src, Tensor_type) ? slot(src, t_off[T_DATA]) : NULL;
    PyObject *base = src_data == NULL ? NULL : slot(src, t_off[T_BASE]), *src_owner = NULL;
    PyObject *chain = base == NULL || base == Py_None ? empty_tuple : slot(src, t_off[T_VIEW_FN]);
    PyObject *prev = base == NULL || base == Py_None ? view_default : slot(src, t_off[T_VIEW_CREATION]);
    PyObject *vc = NULL, *version = NULL, *rest = NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(results);
    int rc = -1, plain = src_data != NULL && base != NULL && chain != NULL && PyTuple_CheckExact(chain) &&
                         prev != NULL;
    if (plain && (src_owner = array_base(src_data)) == NULL)
        return -1;
    for (Py_ssize_t j = 0; plain && j < n; j++) {
        PyObject *owner = array_base(slot(PyTuple_GET_ITEM(results, j), t_off[T_DATA]));
        if (owner == NULL)
            goto done;
        if (owner != Py_None && owner != src_data && owner != src_owner)
            plain = 0;  /* related some other way: the Python function decides */
        Py_DECREF(owner);
    }
    if (!plain) {
        PyObject *call_args = args_tuple(args, nargs), *r = NULL;
        if (call_args != NULL)
            r = PyObject_CallFunctionObjArgs(mark_views_fn, op, call_args, results, NULL);
        Py_XDECREF(call_args);
        rc = r == NULL ? -1 : 0;
        Py_XDECREF(r);
        goto done;
    }
    int src_inference = is_inference(src), grad_on = 0;
    if (!src_inference) {
        if ((vc = version_counter(src)) == NULL || (version = version_of(vc)) == NULL ||
            (rest = args_tuple(args + 1, nargs - 1)) == NULL)
            goto done;
        if (!inference && (grad_on = thread_local_true(&grad_tl, s_grad_enabled)) < 0)
            goto done;
    }
    /* new_view_creation(src, True): inference mode's, else (a view of a view made in inference mode keeps
     * that) a multi-output node's with grad mode on, else no_grad's */
    PyObject *creation = inference ? view_inference : base != Py_None && prev == view_inference ? prev :
                         grad_on ? view_multi : view_no_grad;
    Py_ssize_t n_chain = PyTuple_GET_SIZE(chain);
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *res = PyTuple_GET_ITEM(results, j), *owner = array_base(slot(res, t_off[T_DATA]));
        if (owner == NULL)
            goto done;
        Py_DECREF(owner);  /* only compared */
        if (owner == Py_None)
            continue;  /* NumPy copied: not a view */
        if (src_inference) {  /* a view of an inference tensor: one too, not linked */
            set_slot(res, t_off[T_VC], inference_counter);
            continue;
        }
        PyObject *index = PyLong_FromSsize_t(j), *entry = index ? PyTuple_Pack(3, op, rest, index) : NULL;
        Py_XDECREF(index);
        PyObject *view_fn = entry ? PyTuple_New(n_chain + 1) : NULL;
        if (view_fn == NULL) {
            Py_XDECREF(entry);
            goto done;
        }
        for (Py_ssize_t i = 0; i < n_chain; i++)
            PyTuple_SET_ITEM(view_fn, i, Py_NewRef(PyTuple_GET_ITEM(chain, i)));
        PyTuple_SET_ITEM(view_fn, n_chain, entry);  /* steals it */
        set_slot(res, t_off[T_BASE], base == Py_None ? src : base);
        set_slot(res, t_off[T_VC], vc);
        set_slot(res, t_off[T_VIEW_FN], view_fn);
        set_slot(res, t_off[T_VIEW_VERSION], version);
        set_slot(res, t_off[T_VIEW_CREATION], creation);
        Py_DECREF(view_fn);
    }
    rc = 0;
done:
    Py_XDECREF(src_owner);
    Py_XDECREF(vc);
    Py_XDECREF(version);
    Py_XDECREF(rest);
    return rc;
}

/* The rest of call() below for an op of several outputs (spec's multi_output is not None), after
 * its forward returned `out`, as run_op in ops/_call.py does it: the results are tuple(out), each
 * made an array, the first promoted where the op promotes; each is wrapped, view outputs are
 * linked to their base, and where the call records, one node takes every output's metadata and
 * becomes the history of each floating output that is not one of the op's nondiff outputs
 * (output_nr its index); a saved result is the tuple of SavedTensors of all the outputs
 * (is_output for those of the node), made after the arguments' as _attach_outputs does.
 * `arrays`: the forward's arguments; steals `out` and restores `quiet` (see fp_restore). */
static PyObject *
call_multi(PyObject *spec, PyObject *const *args, Py_ssize_t nargs, PyObject *const *arrays, PyObject *out,
           PyObject *dt, PyObject *quiet, int requires_grad, int inference)
{
    PyObject *op = PyTuple_GET_ITEM(spec, S_OP), *outs = PySequence_Tuple(out), *results = NULL, *node = NULL;
    Py_DECREF(out);
    if (outs == NULL) {
        fp_restore(quiet);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(outs);
    PyObject *wrapped = PyTuple_New(n);  /* the results' arrays */
    for (Py_ssize_t j = 0; wrapped != NULL && j < n; j++) {
        PyObject *o = PyTuple_GET_ITEM(outs, j);
        o = Py_TYPE(o) == (PyTypeObject *)ndarray_type ? Py_NewRef(o) : PyObject_CallOneArg(asarray_fn, o);
        if (o != NULL && j == 0 && PyTuple_GET_ITEM(spec, S_PROMOTE) == Py_True) {
            PyObject *o_dtype = array_dtype(o);
            if (o_dtype == NULL) {
                Py_CLEAR(o);
            } else {
                Py_DECREF(o_dtype);  /* only compared: the array holds it */
                if (o_dtype != dt) {
                    PyObject *call_args = args_tuple(args, nargs);
                    Py_SETREF(o, call_args == NULL ? NULL :
                              PyObject_CallFunctionObjArgs(promote_fn, op, call_args, o, NULL));
                    Py_XDECREF(call_args);
                }
            }
        }
        if (o == NULL)
            Py_CLEAR(wrapped);
        else
            PyTuple_SET_ITEM(wrapped, j, o);
    }
    Py_DECREF(outs);
    if (fp_restore(quiet) < 0 || wrapped == NULL)
        goto fail;
    if ((results = PyTuple_New(n)) == NULL)
        goto fail;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *res = new_tensor(Tensor_type, t_off, PyTuple_GET_ITEM(wrapped, j), cpu_device, zero);
        if (res == NULL)
            goto fail;
        if (inference)
            set_slot(res, t_off[T_VC], inference_counter);
        PyTuple_SET_ITEM(results, j, res);
    }
    if (PyTuple_GET_ITEM(spec, S_VIEW) == Py_True && mark_views_multi(op, args, nargs, results, inference) < 0)
        goto fail;
    if (!requires_grad || inference || PyTuple_GET_ITEM(spec, S_DIFFERENTIABLE) != Py_True)
        goto done;  /* nothing to record */
    int recording = thread_local_true(&grad_tl, s_grad_enabled);
    if (recording <= 0) {
        if (recording < 0)
            goto fail;
        goto done;
    }
    unsigned long present = 0;
    if ((node = new_node(spec, args, nargs, &present)) == NULL)
        goto fail;
    if (node == Py_None)  /* no formula input requires grad */
        goto done;
    PyObject *metas = PyTuple_New(n), *nondiff = PyTuple_GET_ITEM(spec, S_MULTI_OUTPUT);
    if (metas == NULL)
        goto fail;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *res = PyTuple_GET_ITEM(results, j), *arr = PyTuple_GET_ITEM(wrapped, j);
        PyObject *arr_dtype = array_dtype(arr), *one = arr_dtype ? input_metadata(arr, arr_dtype) : NULL;
        Py_XDECREF(arr_dtype);  /* the array holds it */
        if (one == NULL) {
            Py_DECREF(metas);
            goto fail;
        }
        PyTuple_SET_ITEM(metas, j, Py_NewRef(PyTuple_GET_ITEM(one, 0)));
        Py_DECREF(one);
        int is_float = PySet_Contains(float_dtypes, arr_dtype);
        if (is_float < 0) {
            Py_DECREF(metas);
            goto fail;
        }
        for (Py_ssize_t i = 0; is_float && i < PyTuple_GET_SIZE(nondiff); i++) {
            Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(nondiff, i));  /* ints: spec_is_plain */
            if (k == j)
                is_float = 0;  /* an output that never requires grad */
        }
        if (is_float) {
            PyObject *nr = PyLong_FromSsize_t(j);
            if (nr == NULL) {
                Py_DECREF(metas);
                goto fail;
            }
            set_slot(res, t_off[T_GRAD_FN], node);
            set_slot(res, t_off[T_OUTPUT_NR], nr);
            set_slot(res, t_off[T_REQUIRES_GRAD], Py_True);
            Py_DECREF(nr);
        }
    }
    set_slot(node, n_off[N_INPUT_METADATA], metas);
    Py_DECREF(metas);
    PyObject *saves = PyTuple_GET_ITEM(spec, S_SAVES);
    Py_ssize_t n_saves = PyTuple_GET_SIZE(saves), result_slot = -1;
    int any = 0;
    for (Py_ssize_t i = 0; i < n_saves; i++)
        if (PyLong_AsUnsignedLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(saves, i), 2)) & present)
            any = 1;
    if (!any)  /* nothing a needed formula reads: NOTHING_SAVED, set by new_node */
        goto done;
    PyObject *saved = PyTuple_New(n_saves);
    if (saved == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n_saves; i++) {  /* the arguments' first, the results' last, as in Python */
        PyObject *plan = PyTuple_GET_ITEM(saves, i), *value;
        int needed = (PyLong_AsUnsignedLong(PyTuple_GET_ITEM(plan, 2)) & present) != 0;
        if (needed && PyLong_AsLong(PyTuple_GET_ITEM(plan, 0)) == 1) {
            result_slot = i;
            value = Py_NewRef(Py_None);
        } else {
            value = needed ? saved_value(plan, args, arrays, NULL) : Py_NewRef(Py_None);
        }
        if (value == NULL) {
            Py_DECREF(saved);
            goto fail;
        }
        PyTuple_SET_ITEM(saved, i, value);
    }
    if (result_slot >= 0) {  /* tuple(SavedTensor(t, is_output=t._node is node) for t in results) */
        PyObject *each = PyTuple_New(n);
        for (Py_ssize_t j = 0; each != NULL && j < n; j++) {
            PyObject *res = PyTuple_GET_ITEM(results, j);
            PyObject *value = new_saved(res, slot(res, t_off[T_GRAD_FN]) == node);
            if (value == NULL)
                Py_CLEAR(each);
            else
                PyTuple_SET_ITEM(each, j, value);
        }
        if (each == NULL) {
            Py_DECREF(saved);
            goto fail;
        }
        PyObject *placeholder = PyTuple_GET_ITEM(saved, result_slot);
        PyTuple_SET_ITEM(saved, result_slot, each);
        Py_DECREF(placeholder);
    }
    untrack_if_atomic(saved);
    set_slot(node, off_saved, saved);
    Py_DECREF(saved);
done:
    Py_XDECREF(node);
    Py_DECREF(wrapped);
    return results;
fail:
    Py_XDECREF(node);
    Py_XDECREF(wrapped);
    Py_XDECREF(results);
    return NULL;
}

static PyObject *
call(PyObject *module, PyObject *const *argv, Py_ssize_t nargsf)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf) - 1;
    if (nargs < 0 || !configured || !enabled || interposed || !fp_contextvar || !PyTuple_Check(argv[0]) ||
        PyTuple_GET_SIZE(argv[0]) != S_COUNT || nargs > MAX_ARGS)
        /* not set up, switched off, interposed, or not a spec this code reads: the Python path */
        Py_RETURN_NONE;
    PyObject *spec = argv[0], *const *args = argv + 1;
    PyObject *tensor_pos = PyTuple_GET_ITEM(spec, S_TENSOR_POS);
    PyObject *fwd_args[MAX_ARGS + 1];  /* np, then the arguments with tensors replaced by their arrays */
    PyObject **arrays = fwd_args + 1;
    PyObject *dt = NULL;  /* borrowed from the first tensor's array */
    int requires_grad = 0, any_inference = 0, inference = 0;
    PyObject *threads = slot(census, census_off[0]);  /* See Note [Inference tensors] */
    if (threads == NULL)
        Py_RETURN_NONE;
    if (threads != zero) {
        int some = PyObject_IsTrue(threads);
        if (some < 0 || (some && (inference = thread_local_true(&grad_tl, s_inference)) < 0))
            return NULL;
    }
    fwd_args[0] = np_module;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (args[i] == bfloat16_dtype)
            Py_RETURN_NONE;  /* a result of dtype bfloat16: computed in float32 by Python (Note [bfloat16 arrays]) */
        arrays[i] = args[i];
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(tensor_pos); k++) {
        Py_ssize_t p = PyLong_AsSsize_t(PyTuple_GET_ITEM(tensor_pos, k));
        if (p < 0 || p >= nargs) {
            if (PyErr_Occurred())
                return NULL;
            continue;
        }
        PyObject *a = args[p];
        PyTypeObject *tp = Py_TYPE(a);
        if (tp != Tensor_type && tp != Parameter_type) {
            /* See Note [Where __torch_function__ is checked] in _overrides.py: a subclass, or a tensor-like (not
             * a number nor None, with a __torch_function__), may override the call, which Python looks at */
            if (PyObject_TypeCheck(a, Tensor_type))
                Py_RETURN_NONE;
            if (a != Py_None && !PyFloat_CheckExact(a) && !PyLong_CheckExact(a) && !PyBool_Check(a) &&
                !PyTuple_CheckExact(a) && !PyList_CheckExact(a) && _PyType_Lookup(tp, s_torch_function) != NULL)
                Py_RETURN_NONE;  /* (a lookup in the type's cache, which sets no error) */
            continue;
        }
        PyObject *data = slot(a, t_off[T_DATA]), *base = slot(a, t_off[T_BASE]);
        if (data == NULL || base == NULL || slot(a, t_off[T_DEVICE]) != cpu_device ||
            Py_TYPE(data) != (PyTypeObject *)ndarray_type)
            Py_RETURN_NONE;  /* another device: the Python path */
        if (base != Py_None) {  /* a view: fine unless its base changed in place since (Python refreshes it) */
            PyObject *vc = slot(a, t_off[T_VC]), *view_version = slot(a, t_off[T_VIEW_VERSION]);
            if (vc == NULL || vc == Py_None || view_version == NULL)
                Py_RETURN_NONE;
            PyObject *version = PyObject_GetAttr(vc, s_version);
            if (version == NULL)
                return NULL;
            int same = PyObject_RichCompareBool(version, view_version, Py_EQ);
            Py_DECREF(version);
            if (same < 0)
                return NULL;
            if (!same)
                Py_RETURN_NONE;
            if (!PyObject_TypeCheck(base, Tensor_type))
                Py_RETURN_NONE;
            if (slot(a, t_off[T_REQUIRES_GRAD]) != Py_True && slot(base, t_off[T_REQUIRES_GRAD]) == Py_True) {
                /* requires grad through its base alone: a dead edge, in Python, where the call records;
                 * with grad mode off (a formula's transpose of a saved parameter) nothing differs */
                int on = inference ? 1 : thread_local_true(&grad_tl, s_grad_enabled);
                if (on != 0) {
                    if (on < 0)
                        return NULL;
                    Py_RETURN_NONE;
                }
            }
        } else if (is_inference(a)) {
            any_inference = 1;
        }
        PyObject *d = array_dtype(data);
        if (d == NULL)
            return NULL;
        Py_DECREF(d);  /* an array's dtype lives as long as the array */
        if (d == wide_dtype)
            Py_RETURN_NONE;  /* bfloat16: computed in float32 by Python (Note [bfloat16 arrays] in _dtype.py) */
        if (dt == NULL)
            dt = d;
        else if (d != dt && PyTuple_GET_ITEM(spec, S_PROMOTE) == Py_True)
            Py_RETURN_NONE;  /* mixed dtypes: promotion rules in Python (an op without them takes them as given) */
        arrays[p] = data;
        if (slot(a, t_off[T_REQUIRES_GRAD]) == Py_True)
            requires_grad = 1;
    }
    if (any_inference && requires_grad)
        Py_RETURN_NONE;  /* an inference tensor may be saved: SavedTensor raises PyTorch's error */

    PyObject *forward = PyObject_GetAttr(PyTuple_GET_ITEM(spec, S_OP), s_forward);  /* read per call, as in Python */
    if (forward == NULL)
        return NULL;
    PyObject *kernel = PyTuple_GET_ITEM(spec, S_KERNEL), *out, *quiet = NULL;
    if (PyTuple_GET_ITEM(spec, S_VIEW) != Py_True && (quiet = fp_quiet_on()) == NULL) {  /* a view computes nothing */
        Py_DECREF(forward);
        return NULL;
    }
    Py_ssize_t n_ufunc = ufunc_args(PyTuple_GET_ITEM(spec, S_UFUNC), forward, args, nargs);
    if (n_ufunc > 0) {  /* a forward declared by forward_is_ufunc: the ufunc itself */
        out = PyObject_Vectorcall(PyTuple_GET_ITEM(PyTuple_GET_ITEM(spec, S_UFUNC), 1), arrays, n_ufunc, NULL);
    } else if (n_ufunc < 0) {
        out = NULL;
    } else if (PyTuple_Check(kernel) && PyTuple_GET_SIZE(kernel) == 3 && PyTuple_GET_ITEM(kernel, 0) == forward &&
        PyTuple_Check(PyTuple_GET_ITEM(kernel, 2)) && PyTuple_GET_SIZE(PyTuple_GET_ITEM(kernel, 2)) <= nargs) {
        /* the positional adapter of a forward with keyword-only parameters: call the forward itself */
        PyObject *kwnames = PyTuple_GET_ITEM(kernel, 2);
        out = PyObject_Vectorcall(PyTuple_GET_ITEM(kernel, 1), fwd_args, nargs + 1 - PyTuple_GET_SIZE(kwnames),
                                  kwnames);
    } else {
        out = PyObject_Vectorcall(forward, fwd_args, nargs + 1, NULL);
    }
    Py_DECREF(forward);
    if (out == NULL) {
        fp_restore(quiet);
        /* uint8 + 1000: the Python path widens; NumPy's ValueError (shapes that do not broadcast): the
         * Python path raises PyTorch's error in its place */
        if (PyErr_ExceptionMatches(PyExc_OverflowError) || PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        return NULL;
    }
    if (PyTuple_GET_ITEM(spec, S_MULTI_OUTPUT) != Py_None)  /* a tuple of results: See call_multi */
        return call_multi(spec, args, nargs, arrays, out, dt, quiet, requires_grad, inference);
    if (Py_TYPE(out) != (PyTypeObject *)ndarray_type)
        Py_SETREF(out, PyObject_CallOneArg(asarray_fn, out));
    if (out == NULL) {
        fp_restore(quiet);
        return NULL;
    }
    PyObject *out_dtype = array_dtype(out);
    if (out_dtype == NULL) {
        fp_restore(quiet);
        goto fail_out;
    }
    Py_DECREF(out_dtype);
    if (PyTuple_GET_ITEM(spec, S_PROMOTE) == Py_True && out_dtype != dt) {
        PyObject *call_args = args_tuple(args, nargs);
        PyObject *promoted = call_args == NULL ? NULL :
            PyObject_CallFunctionObjArgs(promote_fn, PyTuple_GET_ITEM(spec, S_OP), call_args, out, NULL);
        Py_XDECREF(call_args);
        if (promoted == NULL) {
            fp_restore(quiet);
            goto fail_out;
        }
        Py_SETREF(out, promoted);
        if ((out_dtype = array_dtype(out)) == NULL) {
            fp_restore(quiet);
            goto fail_out;
        }
        Py_DECREF(out_dtype);
    }
    if (fp_restore(quiet) < 0)
        goto fail_out;
    PyObject *res = new_tensor(Tensor_type, t_off, out, cpu_device, zero);
    if (res == NULL)
        goto fail_out;
    if (inference)
        set_slot(res, t_off[T_VC], inference_counter);
    if (PyTuple_GET_ITEM(spec, S_VIEW) == Py_True &&
        mark_view(PyTuple_GET_ITEM(spec, S_OP), args, nargs, res, out, inference) < 0)
        goto fail_res;  /* link the result to its base */
    if (!requires_grad || inference || PyTuple_GET_ITEM(spec, S_DIFFERENTIABLE) != Py_True ||
        PyTuple_GET_ITEM(spec, S_NONDIFF_OUTPUT) == Py_True) {  /* no differentiable output: nothing to record */
        Py_DECREF(out);
        return res;
    }
    int recording = thread_local_true(&grad_tl, s_grad_enabled);
    if (recording <= 0) {
        Py_DECREF(out);
        if (recording < 0)
            Py_CLEAR(res);
        return res;
    }

    /* record: the node with its edges, then metadata and saved values */
    unsigned long present = 0;
    PyObject *node = new_node(spec, args, nargs, &present);
    if (node == NULL)
        goto fail_res;
    if (node == Py_None) {  /* no formula input requires grad */
        Py_DECREF(node);
        Py_DECREF(out);
        return res;
    }
    PyObject *metas = input_metadata(out, out_dtype);
    if (metas == NULL)
        goto fail_node;
    set_slot(node, n_off[N_INPUT_METADATA], metas);
    Py_DECREF(metas);
    int is_float = PySet_Contains(float_dtypes, out_dtype);
    if (is_float < 0)
        goto fail_node;
    if (is_float && PyTuple_GET_ITEM(spec, S_NONDIFF_OUTPUT) != Py_True) {
        set_slot(res, t_off[T_GRAD_FN], node);
        set_slot(res, t_off[T_REQUIRES_GRAD], Py_True);
    }
    PyObject *saves = PyTuple_GET_ITEM(spec, S_SAVES);
    Py_ssize_t n_saves = PyTuple_GET_SIZE(saves);
    if (n_saves) {
        PyObject *saved = PyTuple_New(n_saves);
        if (saved == NULL)
            goto fail_node;
        for (Py_ssize_t i = 0; i < n_saves; i++) {
            PyObject *plan = PyTuple_GET_ITEM(saves, i);
            unsigned long mask = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(plan, 2));
            PyObject *value = (mask & present) ? saved_value(plan, args, arrays, res) : Py_NewRef(Py_None);
            if (value == NULL) {
                Py_DECREF(saved);
                goto fail_node;
            }
            PyTuple_SET_ITEM(saved, i, value);
        }
        untrack_if_atomic(saved);
        set_slot(node, off_saved, saved);
        Py_DECREF(saved);
    }
    Py_DECREF(node);
    Py_DECREF(out);
    return res;

fail_node:
    Py_DECREF(node);
fail_res:
    Py_DECREF(res);
fail_out:
    Py_DECREF(out);
    return NULL;
}

/* -- OpFunction: an op's public function -------------------------------------------------------
 *
 * OpFunction(spec, python_fn, names, defaults, required) binds a call's arguments to the op's
 * parameters (`names`, each with its default, or `required` where there is none) and runs call()
 * above, without a Python frame of its own. Anything it does not handle goes to python_fn, the
 * generated Python function with the same signature, with the arguments as given: a call that
 * binds no argument to some parameter, names one twice or names an unknown one (python_fn raises
 * the TypeError, or takes `out=`, which no op's `names` holds: Note [The out= argument] in
 * ops/_call.py), more than MAX_ARGS parameters, and every call that call() declines. It is a
 * method descriptor, as a Python function is: Tensor's methods and operators bind it, and
 * CPython calls it from an operator slot without making a bound method. Attributes (__name__,
 * __doc__, __signature__...) live in its __dict__. */
typedef struct {
    PyObject_HEAD
    PyObject *spec, *python_fn, *names, *defaults, *required, *dict, *weakrefs;
    vectorcallfunc vectorcall;
} OpFunction;

static PyObject *
opfunction_vectorcall(PyObject *self_obj, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    OpFunction *self = (OpFunction *)self_obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), n = PyTuple_GET_SIZE(self->names);
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    PyObject *bound[MAX_ARGS + 1] = {NULL};  /* the spec, then one value per parameter */
    if (!enabled || interposed || !configured || n > MAX_ARGS || nargs > n)
        goto python;
    bound[0] = self->spec;
    for (Py_ssize_t i = 0; i < nargs; i++)
        bound[i + 1] = args[i];
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t i = 0;
        for (; i < n; i++) {
            PyObject *name = PyTuple_GET_ITEM(self->names, i);
            if (name == key)
                break;
            int same = PyUnicode_Check(key) ? PyUnicode_Compare(name, key) : 1;
            if (same == -1 && PyErr_Occurred())
                return NULL;
            if (same == 0)
                break;
        }
        if (i == n || bound[i + 1] != NULL)  /* unknown, or given twice */
            goto python;
        bound[i + 1] = args[nargs + k];
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (bound[i + 1] == NULL) {
            PyObject *d = PyTuple_GET_ITEM(self->defaults, i);
            if (d == self->required)
                goto python;
            bound[i + 1] = d;
        }
    PyObject *res = call(NULL, bound, n + 1);
    if (res != Py_None)
        return res;  /* the result, or NULL with the error set */
    Py_DECREF(res);
python:
    return PyObject_Vectorcall(self->python_fn, args, nargsf, kwnames);
}

static PyObject *
opfunction_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *spec, *python_fn, *names, *defaults, *required;
    if ((kwargs != NULL && PyDict_GET_SIZE(kwargs)) ||
        !PyArg_ParseTuple(args, "O!OO!O!O:OpFunction", &PyTuple_Type, &spec, &python_fn, &PyTuple_Type, &names,
                          &PyTuple_Type, &defaults, &required)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "OpFunction(spec, python_fn, names, defaults, required)");
        return NULL;
    }
    if (!spec_is_plain(spec) || PyTuple_GET_SIZE(names) != PyTuple_GET_SIZE(defaults) || !PyCallable_Check(python_fn)) {
        PyErr_SetString(PyExc_ValueError, "OpFunction needs a compiled spec (an OpSpec of ops/_compiled.py), a "
                        "callable, and a default per name");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(names, i))) {
            PyErr_SetString(PyExc_TypeError, "OpFunction's names must be str");
            return NULL;
        }
    OpFunction *self = (OpFunction *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->spec = Py_NewRef(spec);
    self->python_fn = Py_NewRef(python_fn);
    self->names = Py_NewRef(names);
    self->defaults = Py_NewRef(defaults);
    self->required = Py_NewRef(required);
    self->vectorcall = opfunction_vectorcall;
    return (PyObject *)self;
}

static int
opfunction_traverse(OpFunction *self, visitproc visit, void *arg)
{
    Py_VISIT(self->spec);
    Py_VISIT(self->python_fn);
    Py_VISIT(self->names);
    Py_VISIT(self->defaults);
    Py_VISIT(self->required);
    Py_VISIT(self->dict);
    return 0;
}

static int
opfunction_clear(OpFunction *self)
{
    Py_CLEAR(self->spec);
    Py_CLEAR(self->python_fn);
    Py_CLEAR(self->names);
    Py_CLEAR(self->defaults);
    Py_CLEAR(self->required);
    Py_CLEAR(self->dict);
    return 0;
}

static void
opfunction_dealloc(OpFunction *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakrefs != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    opfunction_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* As a Python function: looked up on an instance, a bound method. */
static PyObject *
opfunction_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

/* The function's __name__ from its __dict__, or NULL (no error) */
static PyObject *
opfunction_name(OpFunction *self)
{
    PyObject *name = self->dict == NULL ? NULL : PyDict_GetItemString(self->dict, "__qualname__");
    return name != NULL && PyUnicode_Check(name) ? name : NULL;
}

static PyObject *
opfunction_repr(OpFunction *self)
{
    PyObject *name = opfunction_name(self);
    return name ? PyUnicode_FromFormat("<function %U>", name) : PyUnicode_FromString("<function>");
}

/* Pickled by reference, as a function: the name under which its module holds it. */
static PyObject *
opfunction_reduce(OpFunction *self, PyObject *unused)
{
    PyObject *name = opfunction_name(self);
    if (name == NULL) {
        PyErr_SetString(PyExc_TypeError, "cannot pickle an OpFunction without a __qualname__");
        return NULL;
    }
    return Py_NewRef(name);
}

static PyMethodDef opfunction_methods[] = {
    {"__reduce__", (PyCFunction)opfunction_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef opfunction_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject OpFunction_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "retrograd._C._op_call.OpFunction",
    .tp_basicsize = sizeof(OpFunction),
    .tp_dealloc = (destructor)opfunction_dealloc,
    .tp_vectorcall_offset = offsetof(OpFunction, vectorcall),
    .tp_repr = (reprfunc)opfunction_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "An op's public function: see Note [The compiled op call] in ops/_compiled.py.",
    .tp_traverse = (traverseproc)opfunction_traverse,
    .tp_clear = (inquiry)opfunction_clear,
    .tp_weaklistoffset = offsetof(OpFunction, weakrefs),
    .tp_methods = opfunction_methods,
    .tp_getset = opfunction_getset,
    .tp_descr_get = opfunction_get,
    .tp_dictoffset = offsetof(OpFunction, dict),
    .tp_new = opfunction_new,
};

static PyMethodDef methods[] = {
    {"configure", configure, METH_O,
     "configure(ns): binds the classes, functions and values the call works with from the attributes of ns."},
    {"is_configured", is_configured, METH_NOARGS, "is_configured(): whether configure(ns) has succeeded."},
    {"set_enabled", set_enabled, METH_O, "set_enabled(flag): run calls in C (True) or send them all to Python."},
    {"set_interposed", set_interposed, METH_O,
     "set_interposed(flag): an interposer is active (True): send every call to Python."},
    {"set_wide_dtype", set_wide_dtype, METH_O,
     "set_wide_dtype(dt): NumPy's bfloat16 dtype, whose calls go to Python (Note [bfloat16 arrays])."},
    {"is_enabled", is_enabled, METH_NOARGS, "is_enabled(): whether calls run in C (configured and enabled)."},
    {"layout", layout, METH_NOARGS,
     "layout(): what the call reads of the Python objects: namespace entries, slot offsets, tuple fields, "
     "attribute names."},
    {"read_slot", read_slot_py, METH_VARARGS, "read_slot(obj, offset): the object at that slot offset (for tests)."},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL,
     "call(spec, *args): the op call, or None where the generated Python function must run it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_op_call", "The common case of an op call in C; see Note [The compiled op call].", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__op_call(void)
{
    if (intern_all(interned, N_INTERNED) < 0)
        return NULL;
    if ((empty_tuple = PyTuple_New(0)) == NULL ||
        (zero = PyLong_FromLong(0)) == NULL || PyType_Ready(&OpFunction_type) < 0 ||
        (fp_cache_key = PyUnicode_InternFromString("retrograd._C._op_call.quiet_context")) == NULL)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module != NULL && PyModule_AddObjectRef(module, "OpFunction", (PyObject *)&OpFunction_type) < 0)
        Py_CLEAR(module);
    return module;
}
