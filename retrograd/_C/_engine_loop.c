/* The engine's per-node loop in C: an optional accelerator of autograd/engine.py.
 * See Note [The compiled loop] in autograd/engine.py for why it exists; this comment says what it does.
 *
 * engine.py is the engine; this file only re-states the steps that run once per node of a
 * plain backward pass (Engine._run_task, evaluate_function, call_function and the common
 * case of validate_outputs) so that CPython does not execute them bytecode by bytecode.
 * It calls the same Python objects in the same order and hands every other case back to
 * Engine._run_task:
 *
 *   - in a pruned pass (autograd.grad, backward(inputs=...)), a node that captures a
 *     gradient and is needed too, or one that is neither needed nor captures (a node that
 *     only captures stores its gradients in graph_task.captured_vars here: capture below),
 *   - anomaly mode,
 *   - a pass or task begun while an observer watches the engine (Observation.active, read once per
 *     call of execute, backward and run_task: see Note [Observing the engine] in engine.py),
 *   - a node with hooks of any kind (for an AccumulateGrad, also its leaf's tensor hooks and
 *     post-accumulate-grad hooks; register_multi_grad_hook's hooks are tensor hooks),
 *     a node that defines will_release_variables, or an object that is not a Node,
 *   - the first gradient of a leaf where the gradient or the leaf is not row-major (its layout is
 *     AccumulateGrad.apply's: Note [The gradient layout contract] in autograd/accumulate_grad.py).
 *
 * A pass with a timeout, or begun while the backward watchdog is armed, never reaches execute or
 * backward: Engine.execute and Tensor.backward keep it in Python (Note [Stopping a pass from outside]
 * in autograd/interrupts.py). A cancelled or timed-out pass has failed, and the loop reads has_error
 * before each node as it does after any error. execute records its pass in GraphTask.in_flight
 * (Note [Passes in flight] in autograd/graph_task.py), so that dump_engine_state sees it.
 *
 * A gradient whose shape, dtype or device differs from the input it flows into goes through
 * the Python validate_outputs, which sums it down, casts it or raises.
 *
 * run_task(engine, graph_task, node, inputs, queue) has the signature and the contract of
 * Engine._run_task: it runs `node`, routes its outputs, and returns a ready task for the
 * calling thread to run next, or None; errors go to graph_task.set_exception. It also runs
 * on, without the queue, into the single successor that evaluate_function would have handed
 * back (a chain), counting that successor as the same outstanding task: the finished node's
 * decrement and the successor's increment cancel. A successor it does not handle goes to
 * Engine._run_task, whose result it returns (the accounting from there is Python's). When
 * other work is ready in the queue, the successor is pushed so that the queue orders them.
 * Whenever nothing follows directly, it takes the queue's first task itself if that belongs
 * to the same GraphTask (what thread_main would pop next; its count passes to the task). It
 * returns when the queue's first task is another's, when there is none, or on an error.
 *
 * AccumulateGrad's apply runs here too when grad mode is off (accumulate below).
 *
 * execute(engine, roots, inputs, keep_graph, create_graph[, outputs, accumulate_grad]) is
 * Engine.execute for a pass called outside the engine (a pruned one included): the GraphTask, the root, the dependency count, then the
 * thread_main loop (drive) and the completion (mark_completed), each in the order of the Python
 * code, with an unusual completion (an error, final callbacks) left to GraphTask._complete.
 * backward(engine, tensor, keep_graph) and grad(engine, outputs, inputs, keep_graph, create_graph,
 * allow_unused) put the plainest tensor.backward() and autograd.grad in front of it: the seeds, the
 * root and capture edges and, for grad, the check for unused inputs, as autograd/_api.py makes them.
 *
 * Locks: the GraphTask's lock is held while dependencies and input buffers change, as in
 * evaluate_function; the GIL is held between Python calls.
 *
 * Until configure(ns) has bound what it works with (retrograd/_C/_configure.py), every entry point
 * declines. It never raises where the Python code would succeed: past a limit of its own (more
 * than MAX_FORMULA_ARGS formula arguments, an unusual object anywhere) it hands the case back.
 *
 * To run without it: RETROGRAD_COMPILED=0, or engine.use_compiled_loop(False).
 */
#define PY_SSIZE_T_CLEAN
#include "_capi.h"

/* What configure(ns) binds: the Python classes, functions and values the loop works with, each
 * by the name of its attribute in the namespace that retrograd/_C/_configure.py builds. */
static PyTypeObject *Node_type, *Tensor_type, *Parameter_type, *AccumulateGrad_type, *OpNode_type, *SavedTensor_type,
    *ReadyQueue_type, *Edge_type, *NodeExtras_type;
static PyObject *heappush_fn, *heappop_fn, *task_kind, *numpy_module;
static PyObject *InputBuffer_cls, *cpu_device, *grad_state, *Anomaly_cls, *Observation_cls, *worker_state;
static PyObject *validate_outputs_fn, *node_name_fn, *opnode_release_fn, *node_release_fn, *call_post_hooks_fn;
static PyObject *node_tph_fn, *acc_tph_fn;  /* Node's and AccumulateGrad's tensor_pre_hooks, for capture() */
static PyObject *Engine_cls, *GraphTask_cls, *GraphRoot_cls, *no_device, *cpu_device_id, *np_empty_fn, *ndarray_type, *one_int;
static PyObject *rlock_cls, *max_sequence_nr, *VersionCounter_cls;
static int configured = 0;
static ThreadLocal grad_tl, worker_tl;  /* grad_state and worker_state: see ThreadLocal in _capi.h */

static const Binding bindings[] = {
    {"Node", (PyObject **)&Node_type, BIND_TYPE},
    {"NodeExtras", (PyObject **)&NodeExtras_type, BIND_TYPE},
    {"Tensor", (PyObject **)&Tensor_type, BIND_TYPE},
    {"Parameter", (PyObject **)&Parameter_type, BIND_TYPE},
    {"AccumulateGrad", (PyObject **)&AccumulateGrad_type, BIND_TYPE},
    {"OpNode", (PyObject **)&OpNode_type, BIND_TYPE},
    {"SavedTensor", (PyObject **)&SavedTensor_type, BIND_TYPE},
    {"ReadyQueue", (PyObject **)&ReadyQueue_type, BIND_TYPE},
    {"InputBuffer", &InputBuffer_cls, BIND_TYPE},
    {"Engine", &Engine_cls, BIND_TYPE},
    {"GraphTask", &GraphTask_cls, BIND_TYPE},
    {"GraphRoot", &GraphRoot_cls, BIND_TYPE},
    {"Edge", (PyObject **)&Edge_type, BIND_TUPLE_TYPE},
    {"RLock", &rlock_cls, BIND_TYPE},
    {"VersionCounter", &VersionCounter_cls, BIND_TYPE},
    {"cpu", &cpu_device, BIND_ANY},
    {"grad_state", &grad_state, BIND_ANY},
    {"worker_state", &worker_state, BIND_ANY},
    {"Anomaly", &Anomaly_cls, BIND_ANY},
    {"Observation", &Observation_cls, BIND_ANY},
    {"validate_outputs", &validate_outputs_fn, BIND_CALLABLE},
    {"call_post_hooks", &call_post_hooks_fn, BIND_CALLABLE},
    {"node_name", &node_name_fn, BIND_CALLABLE},
    {"NO_DEVICE", &no_device, BIND_ANY},
    {"CPU_DEVICE", &cpu_device_id, BIND_ANY},
    {"MAX_SEQUENCE_NR", &max_sequence_nr, BIND_ANY},
    {"heappush", &heappush_fn, BIND_CALLABLE},
    {"heappop", &heappop_fn, BIND_CALLABLE},
    {"numpy", &numpy_module, BIND_ANY},
};
#define N_BINDINGS ((int)(sizeof(bindings) / sizeof(bindings[0])))

/* Offsets of instance slots, read from the classes' member descriptors (see FieldTable in _capi.h). */
static Py_ssize_t n_off[N_COUNT];  /* Node's, see node_fields in _capi.h */
static Py_ssize_t t_off[T_COUNT];  /* Tensor's, see tensor_fields in _capi.h */
static Py_ssize_t st_off[ST_COUNT];  /* SavedTensor's, see st_fields in _capi.h */
enum { ACC_VARIABLE, ACC_LOCK, ACC_COUNT };
static const char *const acc_fields[ACC_COUNT] = {"_variable", "lock"};
static Py_ssize_t acc_off[ACC_COUNT];
static const char *const opnode_fields[] = {"_saved"};
static Py_ssize_t opnode_off[1];
enum { IB_BUFFER, IB_OWNED, IB_DEVICE, IB_COUNT };
static const char *const ib_fields[IB_COUNT] = {"buffer", "owned", "device"};
static Py_ssize_t ib_off[IB_COUNT];
/* NodeExtras's slots: a node's hooks and metadata (Note [A node's hooks and metadata] in autograd/graph.py). */
enum { EX_PRE_HOOKS, EX_POST_HOOKS, EX_TENSOR_PRE_HOOKS, EX_RETAINS_GRAD_HOOKS, EX_COUNT };
static const char *const extras_fields[EX_COUNT] = {"pre_hooks", "post_hooks", "tensor_pre_hooks",
                                                    "retains_grad_hooks"};
static Py_ssize_t ex_off[EX_COUNT];
static const char *const root_fields[] = {"outputs"};
static Py_ssize_t root_off[1];
static const char *const vc_fields[] = {"version"};
static Py_ssize_t vc_off[1];
#define off_saved opnode_off[0]
#define off_variable acc_off[ACC_VARIABLE]
#define off_acc_lock acc_off[ACC_LOCK]
#define off_ib_buffer ib_off[IB_BUFFER]
#define off_ib_owned ib_off[IB_OWNED]
#define off_ib_device ib_off[IB_DEVICE]
#define off_root_outputs root_off[0]
#define off_version vc_off[0]

static const FieldTable field_tables[] = {
    {"Node", node_fields, N_COUNT, n_off},
    {"NodeExtras", extras_fields, EX_COUNT, ex_off},
    {"Tensor", tensor_fields, T_COUNT, t_off},
    {"SavedTensor", st_fields, ST_COUNT, st_off},
    {"AccumulateGrad", acc_fields, ACC_COUNT, acc_off},
    {"OpNode", opnode_fields, 1, opnode_off},
    {"InputBuffer", ib_fields, IB_COUNT, ib_off},
    {"GraphRoot", root_fields, 1, root_off},
    {"VersionCounter", vc_fields, 1, vc_off},
};
#define N_FIELD_TABLES ((int)(sizeof(field_tables) / sizeof(field_tables[0])))

/* The tuples the loop reads by position, field by field (layout() reports them). */
static const char *const queue_entry_fields[] = {"kind", "neg_depth", "neg_sequence_nr", "order", "graph_task", "node",
                                                 "inputs"};
static const char *const input_metadata_fields[] = {"shape", "dtype", "device"};
static const char *const plan_entry_fields[] = {"formula", "sources", "direct"};
static const char *const direct_form_fields[] = {"call", "spec", "nargs", "when"};
static const char *const exec_info_fields[] = {"needed", "captures"};
static const char *const edge_fields[] = {"node", "input_nr"};
static const char *const outcome_fields[] = {"captured", "error"};
static const char *const handed_over_fields[] = {"node", "inputs"};

static PyObject *zero_int;

/* The most arguments a formula, or its direct form, may take in the compiled loop; a plan with a
 * longer one goes to the node's apply. */
#define MAX_FORMULA_ARGS 8

static PyObject *s_should_execute, *s_key, *s_bump;
static PyObject *s_apply, *s_release_variables, *s_shape, *s_dtype, *s_grad_enabled, *s_enabled,
    *s_acquire, *s_release, *s_add, *s_buffer, *s_device, *s_push, *s_heap, *s_outstanding_tasks,
    *s_set_exception, *s_run_task, *s_device_queue, *s_will_release, *s_exec_info, *s_keep_graph,
    *s_grad_mode, *s_cpu_ready_queue, *s_lock, *s_dependencies, *s_not_ready, *s_has_error,
    *s_multithreading, *s_dev_attr, *s_checkpoint_valid, *s_reentrant_depth, *s_counter, *s_waiting,
    *s_cond, *s_notify, *s_plan, *s_unpack, *s_version, *s_base, *s_flags, *s_writeable, *s_clone, *s_data,
    *s_version_counter, *s_final_callbacks, *s_future_slot, *s_claimed, *s_complete, *s_captured_vars,
    *s_outcome, *s_completed, *s_set_result, *s_current_graph_task, *s_pop, *s_ready_queue_of_owner, *s_wake,
    *s_ready_queue, *s_worker_device, *s_owner, *s_outcome_method, *s_size, *s_kind, *s_fill, *s_graph_root,
    *s_post_acc_hooks, *s_active, *s_in_flight, *s_clock, *s_owner_thread, *s_started, *s_c_contiguous,
    *s_init_to_execute, *s_tensor_pre_hooks;

/* The attributes the loop reads, sets or calls by name, each interned at import, with the
 * objects it reads them on (space-separated; a namespace entry, or a kind of object such as
 * "ndarray"). layout() reports them; the layout test checks that each exists where it says. */
static const Interned interned[] = {
    {&s_apply, "apply", "Node"}, {&s_release_variables, "release_variables", "Node"},
    {&s_will_release, "_will_release", "Node"}, {&s_plan, "plan", "apply_function"},
    {&s_shape, "shape", "ndarray"}, {&s_dtype, "dtype", "ndarray"}, {&s_base, "base", "ndarray"},
    {&s_flags, "flags", "ndarray"}, {&s_writeable, "writeable", "flags"},
    {&s_c_contiguous, "c_contiguous", "flags"}, {&s_size, "size", "ndarray"},
    {&s_kind, "kind", "dtype"}, {&s_fill, "fill", "ndarray"},
    {&s_grad_enabled, "grad_enabled", "grad_state"}, {&s_enabled, "enabled", "Anomaly"},
    {&s_active, "active", "Observation"},
    {&s_acquire, "acquire", "lock"}, {&s_release, "release", "lock"}, {&s_notify, "notify", "cond"},
    {&s_set_result, "set_result", "future"},
    {&s_add, "add", "InputBuffer"}, {&s_buffer, "buffer", "InputBuffer"}, {&s_device, "device", "InputBuffer"},
    {&s_push, "push", "ReadyQueue"}, {&s_key, "key", "ReadyQueue"}, {&s_pop, "pop", "ReadyQueue"}, {&s_heap, "heap", "ReadyQueue"},
    {&s_counter, "counter", "ReadyQueue"}, {&s_waiting, "waiting", "ReadyQueue"}, {&s_cond, "cond", "ReadyQueue"},
    {&s_lock, "lock", "GraphTask ReadyQueue"},
    {&s_outstanding_tasks, "outstanding_tasks", "GraphTask"}, {&s_should_execute, "should_execute", "GraphTask"}, {&s_set_exception, "set_exception", "GraphTask"},
    {&s_exec_info, "exec_info", "GraphTask"}, {&s_keep_graph, "keep_graph", "GraphTask"},
    {&s_grad_mode, "grad_mode", "GraphTask"}, {&s_cpu_ready_queue, "cpu_ready_queue", "GraphTask"},
    {&s_dependencies, "dependencies", "GraphTask"}, {&s_not_ready, "not_ready", "GraphTask"},
    {&s_has_error, "has_error", "GraphTask"}, {&s_reentrant_depth, "reentrant_depth", "GraphTask"},
    {&s_final_callbacks, "final_callbacks", "GraphTask"}, {&s_future_slot, "_future", "GraphTask"},
    {&s_claimed, "_claimed", "GraphTask"}, {&s_captured_vars, "captured_vars", "GraphTask"},
    {&s_outcome, "_outcome", "GraphTask"}, {&s_completed, "completed", "GraphTask"},
    {&s_owner, "owner", "GraphTask"}, {&s_outcome_method, "outcome", "GraphTask"},
    {&s_graph_root, "graph_root", "GraphTask"}, {&s_in_flight, "in_flight", "GraphTask"},
    {&s_clock, "clock", "GraphTask"}, {&s_owner_thread, "owner_thread", "GraphTask"},
    {&s_started, "started", "GraphTask"}, {&s_init_to_execute, "init_to_execute", "GraphTask"},
    {&s_tensor_pre_hooks, "tensor_pre_hooks", "Node"},
    {&s_run_task, "_run_task", "Engine"}, {&s_device_queue, "_device_queue", "Engine"},
    {&s_complete, "_complete", "GraphTask"}, {&s_ready_queue_of_owner, "_ready_queue_of_owner", "Engine"},
    {&s_wake, "_wake_owner", "Engine"}, {&s_multithreading, "multithreading", "GraphTask grad_state"},
    {&s_dev_attr, "_device", "Tensor"}, {&s_data, "_data", "Tensor"}, {&s_clone, "clone", "Tensor"},
    {&s_version_counter, "_version_counter", "Tensor"}, {&s_post_acc_hooks, "_post_accumulate_grad_hooks", "Tensor"},
    {&s_unpack, "unpack", "SavedTensor"},
    {&s_version, "version", "VersionCounter"}, {&s_bump, "bump", "VersionCounter"},
    {&s_checkpoint_valid, "checkpoint_valid", "worker_state"},
    {&s_current_graph_task, "current_graph_task", "worker_state"},
    {&s_ready_queue, "ready_queue", "worker_state"}, {&s_worker_device, "worker_device", "worker_state"},
};
#define N_INTERNED ((int)(sizeof(interned) / sizeof(interned[0])))

/* Direct slot access for the instances of one class with __slots__ (GraphTask, ReadyQueue):
 * obj.name reads or sets the slot when obj is exactly of that class and name one of its slots
 * (names are interned, so a pointer comparison finds them), else it goes through getattr. */
#define MAX_FAST_SLOTS 32
typedef struct {
    PyTypeObject *type;
    int n;
    PyObject *names[MAX_FAST_SLOTS];
    Py_ssize_t offs[MAX_FAST_SLOTS];
} SlotTable;

static SlotTable graph_task_slots, ready_queue_slots;

static int
slot_table_init(SlotTable *t, PyObject *cls)
{
    PyObject *names = PyObject_GetAttrString(cls, "__slots__");
    if (names == NULL)
        return -1;
    PyObject *items = PySequence_Tuple(names);
    Py_DECREF(names);
    if (items == NULL)
        return -1;
    t->type = NULL;
    t->n = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items) && t->n < MAX_FAST_SLOTS; i++) {
        PyObject *name = PyTuple_GET_ITEM(items, i);
        Py_ssize_t off;
        if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, "__weakref__") == 0 ||
            PyUnicode_CompareWithASCIIString(name, "__dict__") == 0)
            continue;
        if (member_offset(cls, PyUnicode_AsUTF8(name), &off) < 0) {
            Py_DECREF(items);
            return -1;
        }
        Py_INCREF(name);
        PyUnicode_InternInPlace(&name);
        Py_XSETREF(t->names[t->n], name);
        t->offs[t->n++] = off;
    }
    Py_DECREF(items);
    t->type = (PyTypeObject *)cls;
    return 0;
}

static inline Py_ssize_t
slot_offset(const SlotTable *t, PyObject *obj, PyObject *name)
{
    if (Py_TYPE(obj) == t->type)
        for (int i = 0; i < t->n; i++)
            if (t->names[i] == name)
                return t->offs[i];
    return -1;
}

/* obj.name, a new reference */
static inline PyObject *
fast_get(const SlotTable *t, PyObject *obj, PyObject *name)
{
    Py_ssize_t off = slot_offset(t, obj, name);
    PyObject *v = off >= 0 ? slot(obj, off) : NULL;
    return v != NULL ? Py_NewRef(v) : PyObject_GetAttr(obj, name);
}

/* obj.name = value */
static inline int
fast_set(const SlotTable *t, PyObject *obj, PyObject *name, PyObject *value)
{
    Py_ssize_t off = slot_offset(t, obj, name);
    if (off < 0)
        return PyObject_SetAttr(obj, name, value);
    set_slot(obj, off, value);
    return 0;
}

/* bool(obj.name): 1, 0, or -1 on error */
static inline int
fast_true(const SlotTable *t, PyObject *obj, PyObject *name)
{
    Py_ssize_t off = slot_offset(t, obj, name);
    PyObject *v = off >= 0 ? slot(obj, off) : NULL;
    if (v == Py_True || v == Py_False)
        return v == Py_True;
    return attr_true(obj, name);
}

#define GT_GET(obj, name) fast_get(&graph_task_slots, (obj), (name))
#define GT_SET(obj, name, value) fast_set(&graph_task_slots, (obj), (name), (value))
#define GT_TRUE(obj, name) fast_true(&graph_task_slots, (obj), (name))
#define RQ_GET(obj, name) fast_get(&ready_queue_slots, (obj), (name))

static int graph_task_layout_check(void);
static int graph_task_layout;

/* configure(ns): binds what the loop works with from the namespace `ns` (see bindings above)
 * and reads the classes' slot offsets. On an error nothing of an earlier configuration is lost
 * but the offsets, and the loop stays unconfigured. */
static PyObject *
configure(PyObject *module, PyObject *ns)
{
    configured = 0;
    if (bind_all(ns, bindings, N_BINDINGS) < 0 || field_tables_init(ns, field_tables, N_FIELD_TABLES) < 0)
        return NULL;
    if (array_head_init(numpy_module) < 0)
        return NULL;
    Py_XSETREF(np_empty_fn, PyObject_GetAttrString(numpy_module, "empty"));
    Py_XSETREF(ndarray_type, PyObject_GetAttrString(numpy_module, "ndarray"));
    if (np_empty_fn == NULL || ndarray_type == NULL)
        return NULL;
    if ((task_kind == NULL && (task_kind = PyLong_FromLong(2)) == NULL) ||
        (zero_int == NULL && (zero_int = PyLong_FromLong(0)) == NULL) ||
        (one_int == NULL && (one_int = PyLong_FromLong(1)) == NULL))
        return NULL;
    PyObject *release_fn = PyObject_GetAttr((PyObject *)OpNode_type, s_release_variables);
    if (release_fn == NULL)
        return NULL;
    Py_XSETREF(opnode_release_fn, release_fn);
    if ((release_fn = PyObject_GetAttr((PyObject *)Node_type, s_release_variables)) == NULL)
        return NULL;
    Py_XSETREF(node_release_fn, release_fn);
    if ((release_fn = PyObject_GetAttr((PyObject *)Node_type, s_tensor_pre_hooks)) == NULL)
        return NULL;
    Py_XSETREF(node_tph_fn, release_fn);
    if ((release_fn = PyObject_GetAttr((PyObject *)AccumulateGrad_type, s_tensor_pre_hooks)) == NULL)
        return NULL;
    Py_XSETREF(acc_tph_fn, release_fn);
    if (slot_table_init(&graph_task_slots, GraphTask_cls) < 0 ||
        slot_table_init(&ready_queue_slots, (PyObject *)ReadyQueue_type) < 0)
        return NULL;
    PyObject *grad_names[] = {s_grad_enabled, s_multithreading};
    PyObject *worker_names[] = {s_checkpoint_valid, s_current_graph_task, s_ready_queue, s_worker_device};
    if (thread_local_init(&grad_tl, grad_state, grad_names, 2) < 0 ||
        thread_local_init(&worker_tl, worker_state, worker_names, 4) < 0)
        return NULL;
    graph_task_layout = graph_task_layout_check();
    configured = 1;
    Py_RETURN_NONE;
}

static PyObject *graph_task_init_fields(void);

static const TupleTable tuple_tables[] = {
    {"queue_entry", queue_entry_fields, 7}, {"input_metadata", input_metadata_fields, 3},
    {"plan_entry", plan_entry_fields, 3}, {"direct_form", direct_form_fields, 4},
    {"exec_info_entry", exec_info_fields, 2}, {"edge", edge_fields, 2}, {"outcome", outcome_fields, 2},
    {"handed_over", handed_over_fields, 2},
};
#define N_TUPLE_TABLES ((int)(sizeof(tuple_tables) / sizeof(tuple_tables[0])))

/* layout(): what the loop reads of the Python objects, for tests/test_compiled_layout.py: the
 * report of layout_report, with the slot tables of GraphTask and ReadyQueue (every slot, read
 * directly where it is one) and the fields new_graph_task fills. */
static PyObject *
layout(PyObject *module, PyObject *unused)
{
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "layout(): the engine loop is not configured");
        return NULL;
    }
    PyObject *out = layout_report(bindings, N_BINDINGS, field_tables, N_FIELD_TABLES, tuple_tables, N_TUPLE_TABLES,
                                  interned, N_INTERNED);
    if (out == NULL)
        return NULL;
    PyObject *slots = PyDict_GetItemString(out, "slots"), *tuples = PyDict_GetItemString(out, "tuples");
    const SlotTable *dynamic[2] = {&graph_task_slots, &ready_queue_slots};
    const char *dynamic_names[2] = {"GraphTask", "ReadyQueue"};
    for (int i = 0; i < 2; i++) {
        PyObject *fields = PyDict_New();
        if (fields == NULL || PyDict_SetItemString(slots, dynamic_names[i], fields) < 0) {
            Py_XDECREF(fields);
            goto error;
        }
        Py_DECREF(fields);
        for (int k = 0; k < dynamic[i]->n; k++) {
            PyObject *off = PyLong_FromSsize_t(dynamic[i]->offs[k]);
            if (off == NULL || PyDict_SetItem(fields, dynamic[i]->names[k], off) < 0) {
                Py_XDECREF(off);
                goto error;
            }
            Py_DECREF(off);
        }
    }
    PyObject *init = graph_task_init_fields();
    if (init == NULL || PyDict_SetItemString(tuples, "graph_task_init", init) < 0 || array_layout_report(out) < 0) {
        Py_XDECREF(init);
        goto error;
    }
    Py_DECREF(init);
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
is_configured(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(configured);
}

static inline int
no_hooks(PyObject *hooks)
{
    return hooks == Py_None || (PyDict_Check(hooks) && PyDict_GET_SIZE(hooks) == 0);
}

/* 1 if the compiled loop runs this node, 0 if Engine._run_task must, -1 on error. */
static int
handled(PyObject *node, int keep_graph)
{
    if (!PyObject_TypeCheck(node, Node_type))
        return 0;
    if (Py_TYPE(node) == AccumulateGrad_type) {  /* runs here when its leaf has no tensor hooks */
        PyObject *ref = slot(node, off_variable);
        if (ref == NULL)
            return 0;
        PyObject *var = PyObject_CallNoArgs(ref);
        if (var == NULL)
            return -1;
        int plain = var == Py_None || (PyObject_TypeCheck(var, Tensor_type) && slot(var, t_off[T_HOOKS]) != NULL &&
                                       no_hooks(slot(var, t_off[T_HOOKS])));
        if (plain && var != Py_None) {  /* nor post-accumulate-grad hooks, in its __dict__ or the class's None */
            PyObject *post = PyObject_GetAttr(var, s_post_acc_hooks);
            plain = post == NULL ? -1 : no_hooks(post);
            Py_XDECREF(post);
        }
        Py_DECREF(var);
        if (plain <= 0)
            return plain;
    }
    PyObject *edges = slot(node, n_off[N_NEXT_EDGES]), *extras = slot(node, n_off[N_EXTRAS]);
    if (edges == NULL || !PyTuple_CheckExact(edges) || extras == NULL)
        return 0;
    if (extras != Py_None) {  /* hooks or metadata: runs here if it has no hooks, metadata alone */
        if (Py_TYPE(extras) != NodeExtras_type)
            return 0;
        PyObject *tph = slot(extras, ex_off[EX_TENSOR_PRE_HOOKS]), *rgh = slot(extras, ex_off[EX_RETAINS_GRAD_HOOKS]);
        PyObject *pre = slot(extras, ex_off[EX_PRE_HOOKS]), *post = slot(extras, ex_off[EX_POST_HOOKS]);
        if (tph != Py_None || rgh != Py_None || pre == NULL || !no_hooks(pre) || post == NULL || !no_hooks(post))
            return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(edges); i++) {  /* edges the routing reads as it is */
        PyObject *edge = PyTuple_GET_ITEM(edges, i);
        if (edge != Py_None && (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 2 ||
                                !PyObject_TypeCheck(PyTuple_GET_ITEM(edge, 0), Node_type) ||
                                !PyLong_CheckExact(PyTuple_GET_ITEM(edge, 1))))
            return 0;
    }
    if (!keep_graph) {
        int r = class_attr_true((PyObject *)Py_TYPE(node), s_will_release);
        if (r != 0)
            return r < 0 ? -1 : 0;
    }
    return 1;
}

/* Whether call_function would run post-hooks after the node: `extras = node._extras; extras is not
 * None and extras.post_hooks` (1, 0, or -1 on error). */
static int
has_post_hooks(PyObject *node)
{
    PyObject *extras = slot(node, n_off[N_EXTRAS]);
    if (extras == NULL || extras == Py_None)
        return 0;
    if (Py_TYPE(extras) == NodeExtras_type) {
        PyObject *post = slot(extras, ex_off[EX_POST_HOOKS]);
        return post == NULL || no_hooks(post) ? 0 : PyObject_IsTrue(post);
    }
    PyObject *post = PyObject_GetAttrString(extras, "post_hooks");  /* something else set there: read it so */
    if (post == NULL)
        return -1;
    int r = PyObject_IsTrue(post);
    Py_DECREF(post);
    return r;
}

/* Passes the pending exception to graph_task.set_exception(exc, node), as the Python
 * `except BaseException` in Engine._run_task does. Returns -1 if that itself fails. */
static int
report_error(PyObject *gt, PyObject *node)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL)
        PyException_SetTraceback(value, tb);
    PyObject *r = PyObject_CallMethodObjArgs(gt, s_set_exception, value, node, NULL);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* 1 if every gradient already matches the input it flows into (the common case), 0 if the
 * Python validate_outputs must look at them, -1 on error. */
static int
outputs_match(PyObject *edges, PyObject *outputs)
{
    Py_ssize_t n = PyTuple_GET_SIZE(edges);
    if (PyList_GET_SIZE(outputs) != n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *edge = PyTuple_GET_ITEM(edges, i), *grad = PyList_GET_ITEM(outputs, i);
        if (edge == Py_None || grad == Py_None)
            continue;
        if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 2 ||
            !PyObject_TypeCheck(PyTuple_GET_ITEM(edge, 0), Node_type) ||
            !PyObject_TypeCheck(grad, Tensor_type))
            return 0;
        PyObject *metas = slot(PyTuple_GET_ITEM(edge, 0), n_off[N_INPUT_METADATA]);
        Py_ssize_t nr = PyLong_AsSsize_t(PyTuple_GET_ITEM(edge, 1));
        if (nr == -1 && PyErr_Occurred())
            return -1;
        if (metas == NULL || !PyTuple_Check(metas) || nr < 0 || nr >= PyTuple_GET_SIZE(metas))
            return 0;
        PyObject *meta = PyTuple_GET_ITEM(metas, nr);
        if (!PyTuple_Check(meta) || PyTuple_GET_SIZE(meta) != 3)
            return 0;
        PyObject *device = PyTuple_GET_ITEM(meta, 2);
        if (device == Py_None)
            device = cpu_device;
        PyObject *arr = slot(grad, t_off[T_DATA]);
        if (arr == NULL || slot(grad, t_off[T_DEVICE]) != device)
            return 0;
        PyObject *dtype = array_dtype(arr);
        if (dtype == NULL)
            return -1;
        int same = dtype == PyTuple_GET_ITEM(meta, 1);
        Py_DECREF(dtype);
        if (!same)
            return 0;
        int eq = array_shape_is(arr, PyTuple_GET_ITEM(meta, 0));
        if (eq != 1)
            return eq;
    }
    return 1;
}

/* obj.name += delta, through the slots of table `t` where they apply (NULL: getattr) */
static int
add_to_attr(const SlotTable *t, PyObject *obj, PyObject *name, long delta)
{
    PyObject *v = t != NULL ? fast_get(t, obj, name) : PyObject_GetAttr(obj, name);
    if (v == NULL)
        return -1;
    PyObject *d = PyLong_FromLong(delta);
    PyObject *nv = d ? PyNumber_Add(v, d) : NULL;
    Py_DECREF(v);
    Py_XDECREF(d);
    if (nv == NULL)
        return -1;
    int r = t != NULL ? fast_set(t, obj, name, nv) : PyObject_SetAttr(obj, name, nv);
    Py_DECREF(nv);
    return r;
}

static int
add_outstanding(PyObject *gt, long delta)
{
    return add_to_attr(&graph_task_slots, gt, s_outstanding_tasks, delta);
}

static int
call_method0(PyObject *obj, PyObject *name)
{
    PyObject *r = call_method_noargs(obj, name);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* obj.name(a, b), its result dropped; -1 on error */
static int
call_method_args(PyObject *obj, PyObject *name, PyObject *a, PyObject *b)
{
    PyObject *r = PyObject_CallMethodObjArgs(obj, name, a, b, NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* ReadyQueue.key(graph_task, node): (kind, -reentrant_depth, -sequence_nr), the order of a node
 * task in a ReadyQueue; the one definition of that order in this file (the Python one is
 * ReadyQueue.key in graph_task.py). NULL with an error for a node without a sequence number. */
static PyObject *
task_key(PyObject *gt, PyObject *node)
{
    PyObject *seq = PyObject_TypeCheck(node, Node_type) ? slot(node, n_off[N_SEQUENCE_NR]) : NULL;
    if (seq == NULL) {
        PyObject *r = PyObject_CallMethodObjArgs((PyObject *)ReadyQueue_type, s_key, gt, node, NULL);
        if (r != NULL && (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 3)) {
            Py_DECREF(r);
            PyErr_SetString(PyExc_TypeError, "ReadyQueue.key must return a 3-tuple");
            return NULL;
        }
        return r;
    }
    PyObject *depth = GT_GET(gt, s_reentrant_depth), *key = NULL;
    PyObject *neg_depth = depth ? PyNumber_Negative(depth) : NULL, *neg_seq = PyNumber_Negative(seq);
    if (neg_depth != NULL && neg_seq != NULL)
        key = PyTuple_Pack(3, task_kind, neg_depth, neg_seq);
    Py_XDECREF(depth);
    Py_XDECREF(neg_depth);
    Py_XDECREF(neg_seq);
    return key;
}

/* ReadyQueue.push(graph_task, node, grads); the queue's own method for anything else. */
static int
push(PyObject *queue, PyObject *gt, PyObject *node, PyObject *grads)
{
    if (Py_TYPE(queue) != ReadyQueue_type || !PyObject_TypeCheck(node, Node_type) ||
        slot(node, n_off[N_SEQUENCE_NR]) == NULL) {
        PyObject *r = PyObject_CallMethodObjArgs(queue, s_push, gt, node, grads, NULL);
        Py_XDECREF(r);
        return r == NULL ? -1 : 0;
    }
    PyObject *key = NULL, *order = NULL, *entry = NULL, *lock = NULL;
    PyObject *heap = NULL, *waiting = NULL, *counter = NULL;
    int rc = -1;
    if ((key = task_key(gt, node)) == NULL ||
        (counter = RQ_GET(queue, s_counter)) == NULL || (order = PyObject_CallNoArgs(counter)) == NULL ||
        (entry = PyTuple_Pack(7, PyTuple_GET_ITEM(key, 0), PyTuple_GET_ITEM(key, 1), PyTuple_GET_ITEM(key, 2),
                              order, gt, node, grads)) == NULL ||
        (lock = RQ_GET(queue, s_lock)) == NULL ||
        (heap = RQ_GET(queue, s_heap)) == NULL)
        goto done;
    if (call_method0(lock, s_acquire) < 0)
        goto done;
    PyObject *push_args[2] = {heap, entry};
    PyObject *r = PyObject_Vectorcall(heappush_fn, push_args, 2, NULL);
    int ok = r != NULL;
    Py_XDECREF(r);
    if (ok && (waiting = RQ_GET(queue, s_waiting)) != NULL) {
        int any = PyObject_IsTrue(waiting);
        if (any > 0) {  /* a thread is blocked in pop(): wake it, as ReadyQueue.push does */
            PyObject *cond = RQ_GET(queue, s_cond);
            ok = cond != NULL && call_method0(cond, s_notify) == 0;
            Py_XDECREF(cond);
        } else if (any < 0) {
            ok = 0;
        }
    } else {
        ok = 0;
    }
    if (call_keeping_error(lock, s_release) < 0)
        goto done;
    rc = ok ? 0 : -1;
done:
    Py_XDECREF(key);
    Py_XDECREF(order);
    Py_XDECREF(counter);
    Py_XDECREF(entry);
    Py_XDECREF(lock);
    Py_XDECREF(heap);
    Py_XDECREF(waiting);
    return rc;
}

/* ReadyQueue.first_runs_before(gt, node): 1 if the first entry of `queue` would pop before `node`
 * of `gt` pushed now (its key is not greater: on a tie the entry was pushed first), 0 if not or
 * the queue is empty, -1 on error. It peeks without the queue's lock, as the Python method does:
 * only the owning thread pops this queue, and a push by another thread just after the peek is a
 * race that pushing and popping would have had too (which of two threads' tasks comes first). */
static int
top_runs_first(PyObject *queue, PyObject *gt, PyObject *node)
{
    PyObject *heap = RQ_GET(queue, s_heap);
    if (heap == NULL)
        return -1;
    int rc = PyObject_IsTrue(heap);
    if (rc > 0 && PyList_CheckExact(heap)) {
        PyObject *top = Py_NewRef(PyList_GET_ITEM(heap, 0)), *key = task_key(gt, node);
        PyObject *first = key != NULL && PyTuple_Check(top) ? PyTuple_GetSlice(top, 0, 3) : NULL;
        rc = first != NULL ? PyObject_RichCompareBool(first, key, Py_LE) : PyErr_Occurred() ? -1 : 1;
        Py_DECREF(top);
        Py_XDECREF(key);
        Py_XDECREF(first);
    } else if (rc > 0) {
        rc = 1;  /* something unusual: let the queue order them */
    }
    Py_DECREF(heap);
    return rc;
}

/* Pops the first entry of `queue` if it is a node task of `gt` (what thread_main would pop and
 * run next), into *node and *grads: 1 if popped, 0 if the first entry is something else. */
static int
pop_same_task(PyObject *queue, PyObject *gt, PyObject **node, PyObject **grads)
{
    if (Py_TYPE(queue) != ReadyQueue_type)
        return 0;
    PyObject *lock = RQ_GET(queue, s_lock), *heap = NULL, *entry = NULL;
    int rc = -1;
    if (lock == NULL || (heap = RQ_GET(queue, s_heap)) == NULL)
        goto done;
    if (!PyList_CheckExact(heap)) {
        rc = 0;
        goto done;
    }
    if (call_method0(lock, s_acquire) < 0)
        goto done;
    rc = 0;
    if (PyList_GET_SIZE(heap)) {
        PyObject *first = PyList_GET_ITEM(heap, 0);
        if (PyTuple_CheckExact(first) && PyTuple_GET_SIZE(first) == 7 &&
            PyTuple_GET_ITEM(first, 4) == gt && PyTuple_GET_ITEM(first, 5) != Py_None) {
            int kind = PyObject_RichCompareBool(PyTuple_GET_ITEM(first, 0), task_kind, Py_EQ);
            if (kind > 0) {
                entry = PyObject_CallOneArg(heappop_fn, heap);
                rc = entry == NULL ? -1 : 1;
            } else if (kind < 0) {
                rc = -1;
            }
        }
    }
    if (call_keeping_error(lock, s_release) < 0) {
        rc = -1;
        goto done;
    }
    if (rc == 1) {
        *node = Py_NewRef(PyTuple_GET_ITEM(entry, 5));
        *grads = Py_NewRef(PyTuple_GET_ITEM(entry, 6));
    }
done:
    Py_XDECREF(lock);
    Py_XDECREF(heap);
    Py_XDECREF(entry);
    return rc;
}

static PyObject *
input_count(PyObject *node)
{
    PyObject *metas = slot(node, n_off[N_INPUT_METADATA]);
    if (metas == NULL) {
        PyErr_SetString(PyExc_AttributeError, "input_metadata");
        return NULL;
    }
    Py_ssize_t n = PyObject_Size(metas);
    return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

/* GraphTask.should_execute(node) for a pruned pass: 1, 0, or -1 on error. An entry other than a
 * [needed, captures] list goes to the method. */
static int
should_execute(PyObject *gt, PyObject *exec_info, PyObject *node)
{
    PyObject *info = PyDict_GetItemWithError(exec_info, node);
    if (info == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (!PyList_CheckExact(info) || PyList_GET_SIZE(info) != 2) {
        PyObject *r = PyObject_CallMethodOneArg(gt, s_should_execute, node);
        int yes = r == NULL ? -1 : PyObject_IsTrue(r);
        Py_XDECREF(r);
        return yes;
    }
    if (PyList_GET_ITEM(info, 1) != Py_None)
        return 1;
    return PyObject_IsTrue(PyList_GET_ITEM(info, 0));
}

/* Whether a pass runs `nxt` (always, unless pruned) and, if it does, its number of inputs in
 * *size: 1 (run; *size a new reference), 0 (skip), -1 on error. */
static int
needed_inputs(PyObject *gt, PyObject *exec_info, PyObject *nxt, PyObject **size)
{
    if (exec_info != Py_None) {
        int needed = should_execute(gt, exec_info, nxt);
        if (needed <= 0)
            return needed;
    }
    *size = input_count(nxt);
    return *size == NULL ? -1 : 1;
}

/* 1 if route keeps node a of gt to run next in place of node b, made ready before it: if a would
 * pop from a ReadyQueue first (task_key) or ties with b, which then goes to the queue first
 * (See Note [Handing over the next task] in autograd/engine.py); 0 if not, -1 on error. */
static int
runs_before(PyObject *gt, PyObject *a, PyObject *b)
{
    PyObject *ka = task_key(gt, a), *kb = ka != NULL ? task_key(gt, b) : NULL;
    int r = kb != NULL ? PyObject_RichCompareBool(ka, kb, Py_LE) : -1;
    Py_XDECREF(ka);
    Py_XDECREF(kb);
    return r;
}

/* InputBuffer(size): the fields its __init__ sets, without its Python frame. */
static PyObject *
new_input_buffer(PyObject *size)
{
    Py_ssize_t n = PyLong_AsSsize_t(size);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    PyTypeObject *type = (PyTypeObject *)InputBuffer_cls;
    PyObject *list = PyList_New(n > 0 ? n : 0), *buffer = NULL;  /* [None] * n */
    if (list == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        PyList_SET_ITEM(list, i, Py_NewRef(Py_None));
    if ((buffer = type->tp_alloc(type, 0)) != NULL) {
        set_slot(buffer, off_ib_buffer, list);
        set_slot(buffer, off_ib_owned, Py_None);
        set_slot(buffer, off_ib_device, cpu_device);
    }
    Py_DECREF(list);
    return buffer;
}

/* t._data = array: the slot itself for a Tensor (no subclass's attribute to go through); 0, or -1 on error. */
static int
set_data(PyObject *t, PyObject *array)
{
    if (Py_TYPE(t) != Tensor_type)
        return PyObject_SetAttr(t, s_data, array);
    if (slot(t, t_off[T_DATA]) != array)  /* an in-place add gives the same array back */
        set_slot(t, t_off[T_DATA], array);
    return 0;
}

/* t._version_counter.bump(): one in-place write of a gradient the engine made (Note [The version of a
 * summed gradient] in autograd/input_buffer.py); a plain counter's version is added to here, any
 * other's (an inference tensor's) is the method's. A tensor without a counter yet (a sum the loop
 * has just made) gets one at version 1, as the property would make it (at 0) before the bump;
 * nothing runs between the look at the slot and the store (See version_counter in _op_call.c).
 * Returns -1 on error. */
static int
bump_version(PyObject *t)
{
    if (Py_TYPE(t) == Tensor_type && slot(t, t_off[T_VC]) == Py_None) {
        PyTypeObject *type = (PyTypeObject *)VersionCounter_cls;
        PyObject *fresh = type->tp_alloc(type, 0);
        if (fresh == NULL)
            return -1;
        set_slot(fresh, off_version, one_int);
        if (slot(t, t_off[T_VC]) == Py_None) {  /* allocating may have run other threads */
            set_slot(t, t_off[T_VC], fresh);
            Py_DECREF(fresh);
            return 0;
        }
        Py_DECREF(fresh);
    }
    if (Py_TYPE(t) == Tensor_type) {  /* a plain counter in the slot: its version + 1, as VersionCounter.bump */
        PyObject *vc = slot(t, t_off[T_VC]);
        PyObject *version = vc != NULL && Py_TYPE(vc) == (PyTypeObject *)VersionCounter_cls ? slot(vc, off_version) : NULL;
        if (version != NULL && PyLong_CheckExact(version)) {
            long v = PyLong_AsLong(version);
            if (v == -1 && PyErr_Occurred())
                return -1;
            PyObject *next = v < LONG_MAX ? PyLong_FromLong(v + 1) : NULL;
            if (next != NULL) {
                set_slot(vc, off_version, next);
                Py_DECREF(next);
                return 0;
            }
            if (v < LONG_MAX)
                return -1;
        }
    }
    PyObject *vc = PyObject_GetAttr(t, s_version_counter);
    if (vc == NULL)
        return -1;
    int rc;
    if (Py_TYPE(vc) == (PyTypeObject *)VersionCounter_cls) {
        rc = add_to_attr(NULL, vc, s_version, 1);
    } else {
        PyObject *r = PyObject_CallMethodNoArgs(vc, s_bump);
        rc = r == NULL ? -1 : 0;
        Py_XDECREF(r);
    }
    Py_DECREF(vc);
    return rc;
}

/* buffer.add(input_nr, grad): InputBuffer.add, re-stated. The first gradient of a slot is
 * stored; a later one is added in place into a sum the buffer made (grad mode off), else summed
 * out of place (old + grad), a sum the buffer then owns when grad mode is off. An unusual
 * buffer goes to the method. Returns -1 on error. */
static int
buffer_add(PyObject *buffer, PyObject *input_nr, PyObject *grad)
{
    PyObject *list = Py_TYPE(buffer) == (PyTypeObject *)InputBuffer_cls ? slot(buffer, off_ib_buffer) : NULL;
    PyObject *owned = list != NULL ? slot(buffer, off_ib_owned) : NULL;
    Py_ssize_t pos = PyLong_AsSsize_t(input_nr);
    if (pos == -1 && PyErr_Occurred())
        return -1;
    if (grad == Py_None)
        return 0;
    if (list == NULL || owned == NULL || !PyList_CheckExact(list) || pos < 0 || pos >= PyList_GET_SIZE(list) ||
        !PyObject_TypeCheck(grad, Tensor_type) || slot(grad, t_off[T_DEVICE]) == NULL)
        return call_method_args(buffer, s_add, input_nr, grad);
    PyObject *old = PyList_GET_ITEM(list, pos);
    if (old == Py_None) {
        PyList_SET_ITEM(list, pos, Py_NewRef(grad));
        Py_DECREF(old);
        PyObject *device = slot(buffer, off_ib_device), *grad_device = slot(grad, t_off[T_DEVICE]);
        if (device == cpu_device && grad_device != cpu_device)  /* the first non-CPU gradient's device */
            set_slot(buffer, off_ib_device, grad_device);
        return 0;
    }
    if (owned != Py_None && !PySet_CheckExact(owned))
        return call_method_args(buffer, s_add, input_nr, grad);
    int mine = owned != Py_None ? PySet_Contains(owned, input_nr) : 0;
    int enabled = mine >= 0 ? thread_local_true(&grad_tl, s_grad_enabled) : -1;
    if (enabled < 0)
        return -1;
    if (!mine || enabled || !PyObject_TypeCheck(old, Tensor_type)) {
        /* buffer[pos] = old + grad; with grad mode off the buffer owns that sum (self.owned) */
        Py_INCREF(old);
        PyObject *total = PyNumber_Add(old, grad);
        Py_DECREF(old);
        if (total == NULL)
            return -1;
        if (enabled) {
            if (PyList_SetItem(list, pos, total) < 0)  /* steals total */
                return -1;
            return 0;
        }
        if (old != grad && bump_version(total) < 0) {  /* the sum counts as PyTorch's in-place add */
            Py_DECREF(total);
            return -1;
        }
        if (PyList_SetItem(list, pos, total) < 0)  /* steals total */
            return -1;
        if (owned == Py_None) {
            PyObject *fresh = PySet_New(NULL);
            if (fresh == NULL)
                return -1;
            set_slot(buffer, off_ib_owned, fresh);
            Py_DECREF(fresh);
            owned = slot(buffer, off_ib_owned);
        }
        return PySet_Add(owned, input_nr);
    }
    /* old._data += grad._data */
    PyObject *old_data = slot(old, t_off[T_DATA]), *data = slot(grad, t_off[T_DATA]);
    if (old_data == NULL || data == NULL)
        return call_method_args(buffer, s_add, input_nr, grad);
    Py_INCREF(old);
    Py_INCREF(old_data);
    PyObject *sum = PyNumber_InPlaceAdd(old_data, data);
    int rc = sum == NULL ? -1 : set_data(old, sum);
    if (rc == 0)
        rc = bump_version(old);
    Py_XDECREF(sum);
    Py_DECREF(old_data);
    Py_DECREF(old);
    return rc;
}

/* The routing half of evaluate_function, under graph_task.lock: counts down each next
 * node's dependencies, adds the gradient into its buffer, and queues the nodes that became
 * ready, except one that this thread may run next (*follow_node, *follow_grads, not counted
 * as outstanding). Returns -1 on error. */
static int
route(PyObject *engine, PyObject *gt, PyObject *node, PyObject *outputs, PyObject *queue,
      PyObject *deps, PyObject *not_ready, PyObject *exec_info, PyObject *cpu_queue, int multithreading,
      PyObject **follow_node, PyObject **follow_grads)
{
    PyObject *edges = slot(node, n_off[N_NEXT_EDGES]);
    Py_ssize_t n = PyTuple_GET_SIZE(edges);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *edge = PyTuple_GET_ITEM(edges, i);
        if (edge == Py_None)
            continue;
        if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 2) {
            PyErr_SetString(PyExc_TypeError, "next_edges must hold Edge tuples or None");
            return -1;
        }
        PyObject *nxt = PyTuple_GET_ITEM(edge, 0), *input_nr = PyTuple_GET_ITEM(edge, 1);
        PyObject *grad = PyList_GET_ITEM(outputs, i);
        PyObject *count_obj = PyDict_GetItemWithError(deps, nxt);
        if (count_obj == NULL) {
            if (PyErr_Occurred())
                return -1;
            PyObject *name = PyObject_CallOneArg(node_name_fn, nxt);
            if (name != NULL) {
                PyErr_Format(PyExc_RuntimeError, "dependency not found for %U", name);
                Py_DECREF(name);
            }
            return -1;
        }
        long count = PyLong_AsLong(count_obj);
        if (count == -1 && PyErr_Occurred())
            return -1;
        PyObject *grads = NULL, *device = NULL;
        PyObject *buffer = PyDict_GetItemWithError(not_ready, nxt);
        if (buffer == NULL && PyErr_Occurred())
            return -1;
        Py_XINCREF(buffer);
        if (count == 1) {
            if (PyDict_DelItem(deps, nxt) < 0 || (buffer != NULL && PyDict_DelItem(not_ready, nxt) < 0))
                goto fail;
            if (buffer == NULL) {  /* one producer: no InputBuffer */
                PyObject *size = NULL;
                int needed = needed_inputs(gt, exec_info, nxt, &size);
                if (needed <= 0) {
                    if (needed < 0)
                        goto fail;
                    continue;
                }
                Py_ssize_t n_inputs = PyLong_AsSsize_t(size);
                Py_DECREF(size);
                Py_ssize_t nr = PyLong_AsSsize_t(input_nr);
                if (nr == -1 && PyErr_Occurred())
                    goto fail;
                if (n_inputs == 1)  /* as evaluate_function: the one slot, whatever the edge says */
                    nr = 0;
                else if (nr < 0)  /* as Python's grads[input_nr] */
                    nr += n_inputs;
                if (nr < 0 || nr >= n_inputs) {
                    PyErr_SetString(PyExc_IndexError, "list assignment index out of range");
                    goto fail;
                }
                grads = PyList_New(n_inputs);
                if (grads == NULL)
                    goto fail;
                for (Py_ssize_t k = 0; k < n_inputs; k++)
                    PyList_SET_ITEM(grads, k, Py_NewRef(k == nr ? grad : Py_None));
                if (grad == Py_None)
                    device = Py_NewRef(cpu_device);
                else if (PyObject_TypeCheck(grad, Tensor_type) && slot(grad, t_off[T_DEVICE]) != NULL)
                    device = Py_NewRef(slot(grad, t_off[T_DEVICE]));
                else if ((device = PyObject_GetAttr(grad, s_dev_attr)) == NULL)
                    goto fail;
            } else {
                if (buffer_add(buffer, input_nr, grad) < 0)
                    goto fail;
                if (Py_TYPE(buffer) == (PyTypeObject *)InputBuffer_cls && slot(buffer, off_ib_buffer) != NULL &&
                    slot(buffer, off_ib_device) != NULL) {  /* its slots, as the attributes read them */
                    grads = Py_NewRef(slot(buffer, off_ib_buffer));
                    device = Py_NewRef(slot(buffer, off_ib_device));
                } else if ((grads = PyObject_GetAttr(buffer, s_buffer)) == NULL ||
                           (device = PyObject_GetAttr(buffer, s_device)) == NULL) {
                    goto fail;
                }
            }
            Py_CLEAR(buffer);
        } else {  /* more producers to come: accumulate into the node's InputBuffer */
            PyObject *left = PyLong_FromLong(count - 1);
            int r = left ? PyDict_SetItem(deps, nxt, left) : -1;
            Py_XDECREF(left);
            if (r < 0)
                goto fail;
            if (buffer == NULL) {
                PyObject *size = NULL;
                int needed = needed_inputs(gt, exec_info, nxt, &size);
                if (needed <= 0) {
                    if (needed < 0)
                        goto fail;
                    continue;
                }
                buffer = new_input_buffer(size);
                Py_DECREF(size);
                if (buffer == NULL || PyDict_SetItem(not_ready, nxt, buffer) < 0)
                    goto fail;
            }
            int added = buffer_add(buffer, input_nr, grad);
            Py_DECREF(buffer);
            if (added < 0)
                return -1;
            continue;
        }
        /* nxt is ready */
        int rc = 0, later = 0;
        if (device != cpu_device && multithreading) {
            PyObject *dq = PyObject_CallMethodOneArg(engine, s_device_queue, device);
            rc = dq == NULL || add_outstanding(gt, 1) < 0 ? -1 : push(dq, gt, nxt, grads);
            Py_XDECREF(dq);
        } else if (cpu_queue == queue && *follow_node != NULL && (later = runs_before(gt, nxt, *follow_node)) < 0) {
            rc = -1;
        } else if (cpu_queue == queue && (*follow_node == NULL || later)) {
            /* the first to run among the ready successors: See Note [Handing over the next task] */
            if (*follow_node != NULL)  /* the one kept so far goes to the queue */
                rc = add_outstanding(gt, 1) < 0 ? -1 : push(cpu_queue, gt, *follow_node, *follow_grads);
            Py_XSETREF(*follow_node, Py_NewRef(nxt));
            Py_XSETREF(*follow_grads, Py_NewRef(grads));
        } else {
            rc = add_outstanding(gt, 1) < 0 ? -1 : push(cpu_queue, gt, nxt, grads);
        }
        Py_DECREF(grads);
        Py_DECREF(device);
        if (rc < 0)
            return -1;
        continue;
    fail:
        Py_XDECREF(buffer);
        Py_XDECREF(grads);
        Py_XDECREF(device);
        return -1;
    }
    return 0;
}

/* SavedTensor.release() */
static void
release_saved(PyObject *value)
{
    if (Py_TYPE(value) != SavedTensor_type)
        return;
    set_slot(value, st_off[ST_ARRAY], Py_None);
    set_slot(value, st_off[ST_PACKED], Py_None);
    set_slot(value, st_off[ST_RELEASED], Py_True);
}

/* node.release_variables(); OpNode's own, the common case, without entering Python. */
static int
release_variables(PyObject *node)
{
    PyObject *fn = class_attr((PyObject *)Py_TYPE(node), s_release_variables);
    if (fn == NULL)
        return -1;
    int own = fn == opnode_release_fn, nothing = fn == node_release_fn;  /* Node's own frees nothing */
    Py_DECREF(fn);
    if (nothing)
        return 0;
    PyObject *saved = own ? slot(node, off_saved) : NULL;
    if (saved == NULL || !PyTuple_CheckExact(saved)) {
        PyObject *r = PyObject_CallMethodNoArgs(node, s_release_variables);
        Py_XDECREF(r);
        return r == NULL ? -1 : 0;
    }
    Py_INCREF(saved);  /* releasing may run arbitrary deallocators */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(saved); i++) {
        PyObject *value = PyTuple_GET_ITEM(saved, i);
        if (PyList_CheckExact(value) || PyTuple_CheckExact(value)) {
            PyObject *items = PySequence_Tuple(value);
            if (items == NULL) {
                Py_DECREF(saved);
                return -1;
            }
            for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(items); k++)
                release_saved(PyTuple_GET_ITEM(items, k));
            Py_DECREF(items);
        } else {
            release_saved(value);
        }
    }
    Py_DECREF(saved);
    return 0;
}

/* True if the saved non-leaf input `original` refers to (a weak reference, or None) has lost its
 * history since it was saved (detach_(), see Note [Saved tensors and their hooks]); -1 if unknown. */
static int
detached_since(PyObject *original, PyObject *is_leaf)
{
    if (original == Py_None || is_leaf == Py_True)
        return 0;
    if (!PyWeakref_CheckRef(original))
        return -1;
    PyObject *tensor = PyWeakref_GetObject(original);  /* borrowed */
    if (tensor == Py_None)
        return 0;
    PyObject *grad_fn = PyObject_TypeCheck(tensor, Tensor_type) ? slot(tensor, t_off[T_GRAD_FN]) : NULL;
    return grad_fn == NULL ? -1 : grad_fn == Py_None;
}

/* SavedTensor.unpack(...) as a built-in node's backward calls it: with the node for a saved output,
 * without it for an input (so that an input detached in place raises). Handles the common case: no
 * unpack hook, not released, not detached or modified in place since it was saved. Anything else
 * goes to the method, which also raises. */
static PyObject *
unpack_saved(PyObject *saved, PyObject *node)
{
    PyObject *vc = slot(saved, st_off[ST_VERSION_COUNTER]), *saved_version = slot(saved, st_off[ST_SAVED_VERSION]);
    PyObject *data = slot(saved, st_off[ST_ARRAY]), *device = slot(saved, st_off[ST_DEVICE]);
    PyObject *is_output = slot(saved, st_off[ST_IS_OUTPUT]), *edge_node = slot(saved, st_off[ST_EDGE_NODE]);
    PyObject *output_nr = slot(saved, st_off[ST_OUTPUT_NR]), *requires_grad = slot(saved, st_off[ST_REQUIRES_GRAD]);
    PyObject *original = slot(saved, st_off[ST_ORIGINAL]), *is_leaf = slot(saved, st_off[ST_IS_LEAF]);
    PyObject *saved_for = is_output == Py_True ? node : Py_None;
    if (slot(saved, st_off[ST_UNPACK_HOOK]) != Py_None || slot(saved, st_off[ST_RELEASED]) != Py_False || vc == NULL ||
        vc == Py_None || saved_version == NULL || data == NULL || data == Py_None || device == NULL ||
        is_output == NULL || edge_node == NULL || output_nr == NULL || requires_grad == NULL || original == NULL ||
        is_leaf == NULL || detached_since(original, is_leaf) != 0)
        return PyObject_CallMethodOneArg(saved, s_unpack, saved_for);
    PyObject *version = PyObject_GetAttr(vc, s_version);
    if (version == NULL)
        return NULL;
    int same = PyObject_RichCompareBool(version, saved_version, Py_EQ);
    Py_DECREF(version);
    if (same != 1)
        return same < 0 ? NULL : PyObject_CallMethodOneArg(saved, s_unpack, saved_for);  /* raises, naming both */
    PyObject *alive = PyWeakref_CheckRef(original) ? PyWeakref_GetObject(original) : Py_None;  /* borrowed */
    if (alive != Py_None && PyObject_TypeCheck(alive, Tensor_type) && slot(alive, t_off[T_DATA]) == data) {
        if (Py_TYPE(alive) != Tensor_type && Py_TYPE(alive) != Parameter_type)  /* a subclass: Python decides */
            return PyObject_CallMethodOneArg(saved, s_unpack, saved_for);
        return Py_NewRef(alive);  /* the input itself, as SavedTensor.unpack gives it back */
    }
    PyObject *owner = is_output == Py_True ? node : edge_node;
    PyObject *t = new_tensor(Tensor_type, t_off, data, device, zero_int);  /* then _from_saved's links */
    if (t == NULL)
        return NULL;
    set_slot(t, t_off[T_VC], vc);
    if (owner == Py_None)
        return t;
    if (PyObject_TypeCheck(owner, AccumulateGrad_type)) {
        PyObject *ref = PyWeakref_NewRef(owner, NULL);
        if (ref == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        set_slot(t, t_off[T_REQUIRES_GRAD], requires_grad == Py_True ? Py_True : Py_False);
        set_slot(t, t_off[T_GRAD_ACC], ref);
        Py_DECREF(ref);
    } else {
        set_slot(t, t_off[T_GRAD_FN], owner);
        set_slot(t, t_off[T_OUTPUT_NR], output_nr);
        set_slot(t, t_off[T_REQUIRES_GRAD], Py_True);
    }
    return t;
}

/* 1 where the array's elements lie in row-major order (flags.c_contiguous), 0 where not, -1 on an error. */
static int
row_major(PyObject *array)
{
    return array_flag(array, ARRAY_C_CONTIGUOUS);
}

/* AccumulateGrad.apply(inputs) with grad mode off and no hooks (handled() checked those), as
 * graph.accumulate_grad does it: an undefined .grad takes the gradient itself when nothing else
 * holds it or its array, else a copy (clone); a defined one is added to in place. Grad mode on
 * goes to the method, and so does a first gradient unless it and the leaf are both row-major
 * (Note [The gradient layout contract] in autograd/accumulate_grad.py). Returns the node's
 * (empty) outputs. */
static PyObject *
accumulate(PyObject *node, PyObject *inputs)
{
    int enabled = thread_local_true(&grad_tl, s_grad_enabled);
    PyObject *ref = slot(node, off_variable), *lock = slot(node, off_acc_lock);
    if (enabled != 0 || ref == NULL || lock == NULL || !PyList_CheckExact(inputs) || PyList_GET_SIZE(inputs) < 1)
        return enabled < 0 ? NULL : PyObject_CallMethodOneArg(node, s_apply, inputs);
    PyObject *var = PyObject_CallNoArgs(ref);
    if (var == NULL)
        return NULL;
    PyObject *grad = PyList_GET_ITEM(inputs, 0), *data = NULL, *old = NULL;
    if (grad != Py_None && var != Py_None) {
        data = PyObject_TypeCheck(grad, Tensor_type) ? slot(grad, t_off[T_DATA]) : NULL;
        old = PyObject_TypeCheck(var, Tensor_type) ? slot(var, t_off[T_GRAD]) : NULL;
        PyObject *old_vc = old == NULL || old == Py_None || !PyObject_TypeCheck(old, Tensor_type) ? NULL
                           : slot(old, t_off[T_VC]);
        if (data == NULL || old == NULL || (old != Py_None && !PyObject_TypeCheck(old, Tensor_type)) ||
            (old_vc != NULL && old_vc != Py_None && Py_TYPE(old_vc) != (PyTypeObject *)VersionCounter_cls)) {
            Py_DECREF(var);  /* something unusual (an inference .grad's counter, too): the method */
            return PyObject_CallMethodOneArg(node, s_apply, inputs);
        }
        if (old == Py_None) {  /* a first gradient: its layout is the method's unless both are row-major */
            PyObject *var_data = slot(var, t_off[T_DATA]);
            int plain = row_major(data);
            if (plain > 0)
                plain = var_data == NULL ? 0 : row_major(var_data);
            if (plain <= 0) {
                if (plain < 0)
                    PyErr_Clear();
                Py_DECREF(var);
                return PyObject_CallMethodOneArg(node, s_apply, inputs);
            }
        }
    }
    PyObject *result = NULL;
    Py_INCREF(grad);
    if (PyList_SetSlice(inputs, 0, 1, NULL) < 0)  /* the engine's reference goes, as `del grads[0]` */
        goto done;
    if (grad == Py_None || var == Py_None || slot(var, t_off[T_REQUIRES_GRAD]) != Py_True) {
        result = PyList_New(0);
        goto done;
    }
    if (slot(var, t_off[T_GRAD_FN]) != Py_None) {
        PyErr_SetString(PyExc_RuntimeError, "leaf variable has been moved into the graph interior");
        goto done;
    }
    if (call_method0(lock, s_acquire) < 0)
        goto done;
    int ok = 0;
    old = slot(var, t_off[T_GRAD]);  /* read again under the lock */
    if (old == NULL || old == Py_None) {
        /* Unshared: this function holds the only reference to the gradient, and the gradient
         * the only one to its array, which owns its memory and may be written. */
        int unshared = Py_REFCNT(grad) == 1 && Py_REFCNT(data) == 1 && slot(grad, t_off[T_GRAD_FN]) == Py_None &&
                       slot(grad, t_off[T_REQUIRES_GRAD]) == Py_False;
        if (unshared) {
            PyObject *owner = array_base(data);
            unshared = owner == NULL ? -1 : owner == Py_None;
            Py_XDECREF(owner);
            if (unshared > 0)
                unshared = array_flag(data, ARRAY_WRITEABLE);
        }
        PyObject *value = unshared < 0 ? NULL : unshared ? Py_NewRef(grad) : PyObject_CallMethodNoArgs(grad, s_clone);
        if (value != NULL && !unshared && bump_version(value) < 0)  /* a copy_ into a new tensor, as PyTorch's */
            Py_CLEAR(value);
        if (value != NULL) {
            set_slot(var, t_off[T_GRAD], value);
            Py_DECREF(value);
            ok = 1;
        }
    } else {  /* old._data += grad._data; old._version_counter.bump() */
        PyObject *old_data = slot(old, t_off[T_DATA]), *sum = NULL;
        Py_XINCREF(old_data);
        Py_INCREF(old);
        if (old_data != NULL && (sum = PyNumber_InPlaceAdd(old_data, data)) != NULL && set_data(old, sum) == 0)
            ok = bump_version(old) == 0;
        Py_XDECREF(old_data);
        Py_XDECREF(sum);
        Py_DECREF(old);
    }
    if (call_keeping_error(lock, s_release) < 0 || !ok)
        goto done;
    result = PyList_New(0);
done:
    Py_DECREF(grad);
    Py_DECREF(var);
    return result;
}

/* A formula's direct form (link_direct_formulas in ops/_compiled.py), `direct` = (call, spec, n,
 * when), applied to the formula's arguments: call(spec, *args[:n]), or args[0] when call is None,
 * if every (position, value) of `when` holds (by identity). Returns None (a new reference) where
 * there is no direct form, it does not apply, or the C call declined: the caller then calls the
 * formula. */
static PyObject *
apply_direct(PyObject *direct, PyObject *const *args, Py_ssize_t nargs)
{
    if (direct == Py_None)
        return Py_NewRef(Py_None);
    Py_ssize_t n = declared_args(direct, args, nargs);
    if (n <= 0)
        return n < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *call = PyTuple_GET_ITEM(direct, 0);
    if (call == Py_None)
        return Py_NewRef(args[0]);
    PyObject *call_args[MAX_FORMULA_ARGS + 1];
    if (n > MAX_FORMULA_ARGS)  /* past what this code holds: the formula itself */
        return Py_NewRef(Py_None);
    call_args[0] = PyTuple_GET_ITEM(direct, 1);
    for (Py_ssize_t i = 0; i < n; i++)
        call_args[i + 1] = args[i];
    return PyObject_Vectorcall(call, call_args, n + 1, NULL);
}

/* 1 if every entry of an apply plan is (formula, sources, direct) with at most MAX_FORMULA_ARGS
 * sources, each the gradient (-1) or a slot of `saved`, and no saved tensor has an unpack hook; 0
 * if apply_node must leave the node to its apply, which reads no plan. The plan unpacks a saved
 * tensor once per formula argument, which only an unpack hook could tell from once per apply
 * (See Note [One unpack per saved tensor and apply]). */
static int
plan_is_plain(PyObject *plan, PyObject *saved)
{
    if (!PyTuple_CheckExact(plan) || !PyTuple_CheckExact(saved))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(saved); i++) {
        PyObject *value = PyTuple_GET_ITEM(saved, i);
        if (Py_TYPE(value) == SavedTensor_type && slot(value, st_off[ST_UNPACK_HOOK]) != Py_None)
            return 0;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(plan); k++) {
        PyObject *entry = PyTuple_GET_ITEM(plan, k);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3 || !PyTuple_Check(PyTuple_GET_ITEM(entry, 1)))
            return 0;
        PyObject *sources = PyTuple_GET_ITEM(entry, 1);
        if (PyTuple_GET_SIZE(sources) > MAX_FORMULA_ARGS)
            return 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(sources); i++) {
            PyObject *src = PyTuple_GET_ITEM(sources, i);
            if (!PyLong_CheckExact(src))
                return 0;
            long v = PyLong_AsLong(src);
            if ((v == -1 && PyErr_Occurred()) || v < -1 || v >= PyTuple_GET_SIZE(saved)) {
                PyErr_Clear();
                return 0;
            }
        }
    }
    return 1;
}

/* node.apply(inputs) for an op's node whose class keeps its generated apply (ops/_codegen.py,
 * build_fast_apply): the same steps from the function's `plan`, without its Python frame. */
static PyObject *
apply_node(PyObject *node, PyObject *inputs)
{
    if (Py_TYPE(node) == (PyTypeObject *)GraphRoot_cls && slot(node, off_root_outputs) != NULL)
        return Py_NewRef(slot(node, off_root_outputs));  /* GraphRoot.apply: the seeds */
    PyObject *saved = PyObject_TypeCheck(node, OpNode_type) ? slot(node, off_saved) : NULL;
    if (saved == NULL)  /* not an op's node: no plan to look for */
        return PyObject_CallMethodOneArg(node, s_apply, inputs);
    PyObject *fn = class_attr((PyObject *)Py_TYPE(node), s_apply);
    if (fn == NULL)
        return NULL;
    PyObject *plan = NULL;  /* the function's `plan` attribute, looked up without raising */
    PyObject *fn_dict = PyFunction_Check(fn) ? PyObject_GenericGetDict(fn, NULL) : NULL;
    if (fn_dict != NULL) {
        plan = PyDict_GetItemWithError(fn_dict, s_plan);
        Py_XINCREF(plan);
        Py_DECREF(fn_dict);
    }
    if (PyErr_Occurred()) {
        Py_XDECREF(plan);
        Py_DECREF(fn);
        return NULL;
    }
    PyObject *edges = slot(node, n_off[N_NEXT_EDGES]);
    if (plan == NULL || !plan_is_plain(plan, saved) || !PyList_CheckExact(inputs) || PyList_GET_SIZE(inputs) < 1 ||
        PyTuple_GET_SIZE(plan) != PyTuple_GET_SIZE(edges)) {
        Py_XDECREF(plan);
        Py_DECREF(fn);
        return PyObject_CallMethodOneArg(node, s_apply, inputs);
    }
    Py_DECREF(fn);
    Py_ssize_t n = PyTuple_GET_SIZE(plan);
    PyObject *grad = PyList_GET_ITEM(inputs, 0);
    PyObject *out = PyList_New(n);
    if (out == NULL)
        goto error;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *r;
        PyObject *formula = PyTuple_GET_ITEM(plan, k);
        if (grad == Py_None || PyTuple_GET_ITEM(edges, k) == Py_None) {
            r = Py_NewRef(Py_None);
        } else {
            PyObject *sources = PyTuple_GET_ITEM(formula, 1);
            Py_ssize_t nargs = PyTuple_GET_SIZE(sources);
            PyObject *args[MAX_FORMULA_ARGS];
            Py_ssize_t got = 0;
            for (; got < nargs; got++) {
                Py_ssize_t src = PyLong_AsSsize_t(PyTuple_GET_ITEM(sources, got));
                PyObject *v;
                if (src < 0) {
                    v = Py_NewRef(grad);
                } else {  /* in range: plan_is_plain checked */
                    v = PyTuple_GET_ITEM(saved, src);
                    v = Py_TYPE(v) == SavedTensor_type ? unpack_saved(v, node) : Py_NewRef(v);
                }
                if (v == NULL)
                    break;
                args[got] = v;
            }
            r = NULL;
            if (got == nargs && (r = apply_direct(PyTuple_GET_ITEM(formula, 2), args, nargs)) == Py_None) {
                Py_DECREF(r);  /* no direct form, or it declined: the formula itself */
                r = PyObject_Vectorcall(PyTuple_GET_ITEM(formula, 0), args, nargs, NULL);
            }
            for (Py_ssize_t i = 0; i < got; i++)
                Py_DECREF(args[i]);
            if (r == NULL)
                goto error;
        }
        PyList_SET_ITEM(out, k, r);
    }
    Py_DECREF(plan);
    return out;
error:
    Py_XDECREF(out);
    Py_DECREF(plan);
    return NULL;
}

static PyObject *
call_python(PyObject *engine, PyObject *gt, PyObject *node, PyObject *inputs, PyObject *queue)
{
    PyObject *args[5] = {engine, gt, node, inputs, queue};
    return PyObject_VectorcallMethod(s_run_task, args, 5, NULL);
}

/* evaluate_function's capture for a node a pruned pass does not need, `captures` its list of
 * (input_idx, output_idx): graph_task.captured_vars[output_idx] = inputs[input_idx] under the
 * GraphTask's lock, for a handled node (no tensor hooks, so call_tensor_pre_hooks changes
 * nothing) whose class keeps Node's or AccumulateGrad's tensor_pre_hooks. Returns 1 once
 * captured, 0, having done nothing, for Engine._run_task, or -1 on error. */
static int
capture(PyObject *gt, PyObject *node, PyObject *captures, PyObject *inputs, PyObject *lock)
{
    if (!PyList_CheckExact(captures) || !PyList_CheckExact(inputs))
        return 0;
    PyObject *fn = class_attr((PyObject *)Py_TYPE(node), s_tensor_pre_hooks);
    if (fn == NULL)
        return -1;
    int plain = fn == node_tph_fn || fn == acc_tph_fn;
    Py_DECREF(fn);
    PyObject *captured = plain ? GT_GET(gt, s_captured_vars) : NULL;
    if (captured == NULL)
        return plain ? -1 : 0;
    int ok = PyList_CheckExact(captured);
    for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(captures); i++) {  /* every index in range, or Python */
        PyObject *pair = PyList_GET_ITEM(captures, i);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(pair, 0)) ||
            !PyLong_CheckExact(PyTuple_GET_ITEM(pair, 1))) {
            ok = 0;
            break;
        }
        Py_ssize_t in = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0)), out = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 1));
        if ((in == -1 || out == -1) && PyErr_Occurred())
            PyErr_Clear();
        ok = in >= 0 && in < PyList_GET_SIZE(inputs) && out >= 0 && out < PyList_GET_SIZE(captured);
    }
    if (!ok) {
        Py_DECREF(captured);
        return 0;
    }
    if (call_method0(lock, s_acquire) < 0) {
        Py_DECREF(captured);
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(captures); i++) {  /* the lists cannot change: no Python runs */
        PyObject *pair = PyList_GET_ITEM(captures, i);
        Py_ssize_t in = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0)), out = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 1));
        PyObject *old = PyList_GET_ITEM(captured, out);
        PyList_SET_ITEM(captured, out, Py_NewRef(PyList_GET_ITEM(inputs, in)));
        Py_XDECREF(old);  /* may run a finalizer: the last reference goes after the store */
    }
    Py_DECREF(captured);
    return call_keeping_error(lock, s_release) < 0 ? -1 : 1;
}

static PyObject *
run_task(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "run_task(engine, graph_task, node, inputs, queue)");
        return NULL;
    }
    PyObject *engine = args[0], *gt = args[1], *queue = args[4];
    if (!configured)  /* nothing bound yet: Engine._run_task does it all */
        return call_python(engine, gt, args[2], args[3], queue);
    int observed = class_attr_true(Observation_cls, s_active);  /* See Note [Observing the engine] */
    if (observed != 0)
        return observed < 0 ? NULL : call_python(engine, gt, args[2], args[3], queue);
    if (!PyObject_TypeCheck(engine, (PyTypeObject *)Engine_cls))  /* another engine: its own _run_task */
        return call_python(engine, gt, args[2], args[3], queue);
    PyObject *exec_info = GT_GET(gt, s_exec_info);
    if (exec_info == NULL)
        return NULL;
    int pruned = exec_info != Py_None;
    if (pruned && !PyDict_CheckExact(exec_info)) {
        Py_DECREF(exec_info);
        return call_python(engine, gt, args[2], args[3], queue);
    }

    PyObject *result = NULL, *prev_grad = NULL, *grad_mode = NULL, *cpu_queue = NULL, *lock = NULL;
    PyObject *prev_checkpoint_valid = NULL;
    PyObject *deps = NULL, *not_ready = NULL, *outputs = NULL;
    PyObject *node = Py_NewRef(args[2]), *inputs = Py_NewRef(args[3]);
    int keep_graph, multithreading, first = 1;
    if ((keep_graph = GT_TRUE(gt, s_keep_graph)) < 0 ||
        (multithreading = GT_TRUE(gt, s_multithreading)) < 0 ||  /* See Note [Multithreading switch] */
        (grad_mode = GT_GET(gt, s_grad_mode)) == NULL ||
        (cpu_queue = GT_GET(gt, s_cpu_ready_queue)) == NULL ||
        (lock = GT_GET(gt, s_lock)) == NULL ||
        (deps = GT_GET(gt, s_dependencies)) == NULL ||
        (not_ready = GT_GET(gt, s_not_ready)) == NULL)
        goto error;
    if (!PyDict_CheckExact(deps) || !PyDict_CheckExact(not_ready)) {  /* unusual: Engine._run_task */
        result = call_python(engine, gt, node, inputs, queue);
        goto done;
    }

    for (;;) {
        if (!first) {  /* a chained successor: skip it if the pass has failed meanwhile */
            int failed = GT_TRUE(gt, s_has_error);
            if (failed != 0) {
                if (failed < 0)
                    goto error;
                result = Py_NewRef(Py_None);
                break;
            }
        }
        first = 0;
        int ok = handled(node, keep_graph), anomaly;
        if (ok < 0 || (anomaly = class_attr_true(Anomaly_cls, s_enabled)) < 0)
            goto error;
        if (ok && pruned) {  /* needed and capturing nothing (the plain case), or captured and not needed */
            PyObject *info = PyDict_GetItemWithError(exec_info, node);
            if (info == NULL && PyErr_Occurred())
                goto error;
            if (info == NULL || !PyList_CheckExact(info) || PyList_GET_SIZE(info) != 2)
                ok = 0;
            else if ((ok = PyObject_IsTrue(PyList_GET_ITEM(info, 0))) < 0)
                goto error;
            else if (PyList_GET_ITEM(info, 1) != Py_None) {
                PyObject *captures = Py_NewRef(PyList_GET_ITEM(info, 1));
                int done = ok || anomaly ? 0 : capture(gt, node, captures, inputs, lock);  /* a needed one: Python */
                Py_DECREF(captures);
                if (done < 0)
                    goto error;
                if (done) {  /* not needed: evaluate_function returns */
                    result = Py_NewRef(Py_None);
                    break;
                }
                ok = 0;
            }
        }
        if (!ok || anomaly) {
            result = call_python(engine, gt, node, inputs, queue);
            break;
        }
        if (prev_grad == NULL) {  /* the pass's grad mode, as Engine._run_task sets it */
            if ((prev_grad = thread_local_get(&grad_tl, s_grad_enabled)) == NULL)
                goto error;
            if (prev_grad != grad_mode && thread_local_set(&grad_tl, s_grad_enabled, grad_mode) < 0)
                goto error;
            if (pruned) {  /* See Note [Checkpoint validity] in engine.py */
                if ((prev_checkpoint_valid = thread_local_get(&worker_tl, s_checkpoint_valid)) == NULL ||
                    thread_local_set(&worker_tl, s_checkpoint_valid, Py_False) < 0)
                    goto error;
            }
        }

        /* call_function, without hooks */
        outputs = Py_TYPE(node) == AccumulateGrad_type ? accumulate(node, inputs) : apply_node(node, inputs);
        Py_CLEAR(inputs);
        if (outputs != NULL && !PyList_CheckExact(outputs))
            Py_SETREF(outputs, PySequence_List(outputs));
        if (outputs == NULL)
            goto node_error;
        int match = outputs_match(slot(node, n_off[N_NEXT_EDGES]), outputs);
        if (match < 0)
            goto node_error;
        if (!match) {
            PyObject *checked = PyObject_CallFunctionObjArgs(validate_outputs_fn, slot(node, n_off[N_NEXT_EDGES]),
                                                             outputs, node, NULL);
            if (checked == NULL)
                goto node_error;
            Py_SETREF(outputs, checked);
            if (!PyList_CheckExact(outputs)) {
                Py_SETREF(outputs, PySequence_List(outputs));
                if (outputs == NULL)
                    goto node_error;
            }
        }
        /* post-hooks registered while the node ran (handled() saw none before): call_function runs them with no
         * grad_outputs, as PyTorch does */
        int post_hooks = has_post_hooks(node);
        if (post_hooks < 0)
            goto node_error;
        if (post_hooks) {
            PyObject *none = PyTuple_New(0);
            if (none == NULL)
                goto node_error;
            PyObject *hooked = PyObject_CallFunctionObjArgs(call_post_hooks_fn, node, outputs, none, NULL);
            Py_DECREF(none);
            if (hooked == NULL)
                goto node_error;
            Py_SETREF(outputs, hooked);
            if (!PyList_CheckExact(outputs)) {
                Py_SETREF(outputs, PySequence_List(outputs));
                if (outputs == NULL)
                    goto node_error;
            }
        }
        if (!keep_graph && release_variables(node) < 0)
            goto node_error;
        if (PyList_GET_SIZE(outputs) == 0) {
            result = Py_NewRef(Py_None);
            break;
        }

        /* evaluate_function's routing */
        PyObject *follow_node = NULL, *follow_grads = NULL;
        PyObject *r = call_method_noargs(lock, s_acquire);
        if (r == NULL)
            goto node_error;
        Py_DECREF(r);
        int rc = route(engine, gt, node, outputs, queue, deps, not_ready, exec_info, cpu_queue, multithreading,
                       &follow_node, &follow_grads);
        if (rc == 0 && follow_node != NULL) {
            /* the queue's first task goes first: queue the successor too, and let the queue order them */
            int busy = top_runs_first(cpu_queue, gt, follow_node);
            if (busy < 0) {
                rc = -1;
            } else if (busy) {
                /* Push it, then take the queue's first task if it is ours, as thread_main would
                 * next: the successor's count and the finished node's cancel either way. */
                rc = push(cpu_queue, gt, follow_node, follow_grads);
                Py_CLEAR(follow_node);
                Py_CLEAR(follow_grads);
                if (rc == 0) {
                    rc = pop_same_task(queue, gt, &follow_node, &follow_grads);
                    if (rc == 1) {
                        rc = 0;
                    } else {  /* not ours (or an error): the pushed successor counts, thread_main pops */
                        PyObject *et, *ev, *etb;
                        PyErr_Fetch(&et, &ev, &etb);
                        if (add_outstanding(gt, 1) < 0)
                            rc = -1;
                        if (et != NULL) {
                            PyErr_Clear();
                            PyErr_Restore(et, ev, etb);
                        }
                    }
                }
            }
        }
        if (rc == 0 && follow_node == NULL && cpu_queue == queue) {
            /* Nothing follows: take the queue's first task if it is ours, as thread_main would
             * next. It was counted when pushed; the finished node's count goes. */
            rc = pop_same_task(queue, gt, &follow_node, &follow_grads);
            if (rc == 1)
                rc = add_outstanding(gt, -1);
        }
        /* release the lock with any error of the routing set aside */
        if (call_keeping_error(lock, s_release) < 0) {
            Py_XDECREF(follow_node);
            Py_XDECREF(follow_grads);
            goto error;
        }
        Py_CLEAR(outputs);
        if (rc < 0) {
            Py_XDECREF(follow_node);
            Py_XDECREF(follow_grads);
            goto node_error;
        }
        if (follow_node == NULL) {
            result = Py_NewRef(Py_None);
            break;
        }
        Py_SETREF(node, follow_node);
        inputs = follow_grads;
        continue;

    node_error:  /* the error of this node goes to the GraphTask, as in Engine._run_task */
        Py_CLEAR(outputs);
        if (report_error(gt, node) < 0)
            goto error;
        result = Py_NewRef(Py_None);
        break;
    }
    goto done;

error:
    Py_CLEAR(result);
done:
    /* restore the thread's state, keeping a pending error */
    if (prev_grad != NULL && prev_grad != grad_mode &&
        thread_local_set_keeping_error(&grad_tl, s_grad_enabled, prev_grad) < 0)
        Py_CLEAR(result);
    if (prev_checkpoint_valid != NULL) {
        if (thread_local_set_keeping_error(&worker_tl, s_checkpoint_valid, prev_checkpoint_valid) < 0)
            Py_CLEAR(result);
        Py_DECREF(prev_checkpoint_valid);
    }
    Py_XDECREF(exec_info);
    Py_XDECREF(prev_grad);
    Py_XDECREF(grad_mode);
    Py_XDECREF(cpu_queue);
    Py_XDECREF(lock);
    Py_XDECREF(deps);
    Py_XDECREF(not_ready);
    Py_XDECREF(outputs);
    Py_XDECREF(node);
    Py_XDECREF(inputs);
    return result;
}

/* `seq` as a tuple of exactly n items, as Python's `a, b = seq` unpacks it: a new reference, or
 * NULL with the ValueError or TypeError that unpacking raises. Steals nothing. */
static PyObject *
unpack_exactly(PyObject *seq, Py_ssize_t n)
{
    PyObject *items = PySequence_Tuple(seq);
    if (items == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "cannot unpack non-iterable %.200s object", Py_TYPE(seq)->tp_name);
        }
        return NULL;
    }
    if (PyTuple_GET_SIZE(items) != n) {
        PyErr_Format(PyExc_ValueError, PyTuple_GET_SIZE(items) > n ? "too many values to unpack (expected %zd)" :
                     "not enough values to unpack (expected %zd, got %zd)", n, PyTuple_GET_SIZE(items));
        Py_DECREF(items);
        return NULL;
    }
    return items;
}

/* The count of one more edge into `nxt`: deps[nxt] = deps.get(nxt, 0) + 1. Returns 1 where `nxt`
 * was not in deps before (its first edge), 0 where it was, -1 on error. */
static int
count_edge(PyObject *deps, PyObject *nxt)
{
    PyObject *count = PyDict_GetItemWithError(deps, nxt);
    if (count == NULL) {
        if (PyErr_Occurred())
            return -1;
        return PyDict_SetItem(deps, nxt, one_int) < 0 ? -1 : 1;
    }
    long n = PyLong_CheckExact(count) ? PyLong_AsLong(count) : -1;
    PyObject *updated;
    if (n >= 0 && n < LONG_MAX)  /* an int of the dict's own making: no call to its __add__ */
        updated = PyLong_FromLong(n + 1);
    else if (n == -1 && PyErr_Occurred())
        return -1;
    else
        updated = PyNumber_Add(count, one_int);
    if (updated == NULL)
        return -1;
    int rc = PyDict_SetItem(deps, nxt, updated);
    Py_DECREF(updated);
    return rc < 0 ? -1 : 0;
}

/* Engine.compute_dependencies(root, graph_task), on the GraphTask's dependencies dict; -1 on error.
 *
 * The walk of the Python method, in its order: a stack of the nodes to visit, each node's edges in
 * order, a node pushed when first reached. Where `deps` starts empty, as it does for every pass, a
 * node is first reached exactly when its count is first set (the root, pushed at the start, aside),
 * so the count itself says what the method's `seen` set does and no set is made; a stack of nodes held here replaces the method's list. Edges are read as tuples
 * where they are tuples (an Edge), else by `edge[0]`, as the method reads them. */
static int
count_dependencies(PyObject *root, PyObject *deps)
{
    PyObject *seen = NULL;  /* only where deps did not start empty */
    if (PyDict_GET_SIZE(deps) != 0 && ((seen = PySet_New(NULL)) == NULL || PySet_Add(seen, root) < 0)) {
        Py_XDECREF(seen);
        return -1;
    }
    Py_ssize_t depth = 0, cap = 32;
    PyObject *local[32], **stack = local;  /* strong references */
    stack[depth++] = Py_NewRef(root);
    int rc = -1;
    while (depth > 0) {
        PyObject *node = stack[--depth];
        PyObject *edges = PyObject_TypeCheck(node, Node_type) && slot(node, n_off[N_NEXT_EDGES]) != NULL
            ? Py_NewRef(slot(node, n_off[N_NEXT_EDGES])) : PyObject_GetAttrString(node, "next_edges");
        Py_DECREF(node);
        if (edges == NULL)
            goto done;
        PyObject *items = PyTuple_CheckExact(edges) ? Py_NewRef(edges) : PySequence_Fast(edges, "next_edges must be a sequence");
        Py_DECREF(edges);
        if (items == NULL)
            goto done;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); i++) {
            PyObject *edge = PySequence_Fast_GET_ITEM(items, i);
            if (edge == Py_None)
                continue;
            PyObject *nxt = PyTuple_Check(edge) && PyTuple_GET_SIZE(edge) > 0 ? Py_NewRef(PyTuple_GET_ITEM(edge, 0))
                                                                                : PySequence_GetItem(edge, 0);
            if (nxt == NULL)
                goto error_items;
            int first = count_edge(deps, nxt);
            if (first > 0 && nxt == root)  /* an edge back to the root (a graph with a cycle): seen */
                first = 0;
            if (first >= 0 && seen != NULL) {  /* the method's own test */
                first = PySet_Contains(seen, nxt);
                first = first < 0 ? -1 : first == 0 && PySet_Add(seen, nxt) < 0 ? -1 : !first;
            }
            if (first > 0 && depth == cap) {
                PyObject **grown = PyMem_Malloc(2 * cap * sizeof(PyObject *));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    first = -1;
                } else {
                    memcpy(grown, stack, depth * sizeof(PyObject *));
                    if (stack != local)
                        PyMem_Free(stack);
                    stack = grown;
                    cap *= 2;
                }
            }
            if (first > 0)
                stack[depth++] = Py_NewRef(nxt);
            Py_DECREF(nxt);
            if (first < 0)
                goto error_items;
        }
        Py_DECREF(items);
        continue;
    error_items:
        Py_DECREF(items);
        goto done;
    }
    rc = 0;
done:
    while (depth > 0)
        Py_DECREF(stack[--depth]);
    if (stack != local)
        PyMem_Free(stack);
    Py_XDECREF(seen);
    return rc;
}

static PyObject *
compute_dependencies(PyObject *module, PyObject *args)
{
    PyObject *root, *deps;
    if (!PyArg_ParseTuple(args, "OO!:compute_dependencies", &root, &PyDict_Type, &deps))
        return NULL;
    if (!configured)  /* nothing bound yet: Engine.compute_dependencies walks the graph itself */
        Py_RETURN_NOTIMPLEMENTED;
    if (count_dependencies(root, deps) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* A node's next_edges for init_to_execute's walk: a new reference to the tuple, or NULL with no
 * error for an object this walk leaves to Python (not a Node, edges not a tuple of None or pairs
 * with a Node first), or NULL with an error. */
static PyObject *
walk_edges(PyObject *node)
{
    PyObject *edges = PyObject_TypeCheck(node, Node_type) ? slot(node, n_off[N_NEXT_EDGES]) : NULL;
    if (edges == NULL || !PyTuple_CheckExact(edges))
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(edges); i++) {
        PyObject *edge = PyTuple_GET_ITEM(edges, i);
        if (edge != Py_None && (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 2 ||
                                !PyObject_TypeCheck(PyTuple_GET_ITEM(edge, 0), Node_type)))
            return NULL;
    }
    return Py_NewRef(edges);
}

/* exec_info[node] = [True, captures], keeping the captures of an entry already there; -1 on error */
static int
mark_node_needed(PyObject *exec_info, PyObject *node)
{
    PyObject *info = PyDict_GetItemWithError(exec_info, node);
    if (info != NULL)
        return PyList_SetItem(info, 0, Py_NewRef(Py_True));
    if (PyErr_Occurred() || (info = PyList_New(2)) == NULL)
        return -1;
    PyList_SET_ITEM(info, 0, Py_NewRef(Py_True));
    PyList_SET_ITEM(info, 1, Py_NewRef(Py_None));
    int rc = PyDict_SetItem(exec_info, node, info);
    Py_DECREF(info);
    return rc;
}

typedef struct {
    PyObject *node, *edges;  /* strong references */
    Py_ssize_t next;  /* the next edge to visit */
} WalkFrame;

/* GraphTask.init_to_execute(graph_root, outputs, accumulate_grad): the same entries, made in the
 * same order, by the same iterative post-order walk, into a new dict that becomes gt.exec_info
 * (with captured_vars) only once the walk has finished. Returns 1 when done, 0 having changed
 * nothing for the Python method (an unusual output, node or edge), -1 on error. */
static int
init_to_execute(PyObject *gt, PyObject *root, PyObject *outputs, int accumulate_grad)
{
    PyObject *items = PySequence_Fast(outputs, "outputs must be a sequence");
    if (items == NULL)
        return -1;
    Py_ssize_t n_out = PySequence_Fast_GET_SIZE(items), depth = 0, cap = 16;
    PyObject *exec_info = PyDict_New(), *visited = PySet_New(NULL), *captured = PyList_New(n_out);
    WalkFrame *stack = PyMem_Malloc(cap * sizeof(WalkFrame));
    int rc = -1;
    if (exec_info == NULL || visited == NULL || captured == NULL || stack == NULL) {
        if (stack == NULL)
            PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_out; i++)
        PyList_SET_ITEM(captured, i, Py_NewRef(Py_None));
    for (Py_ssize_t k = 0; k < n_out; k++) {
        PyObject *edge = PySequence_Fast_GET_ITEM(items, k);
        if (edge == Py_None)  /* an input the graph never reached */
            continue;
        if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 2 ||
            !PyObject_TypeCheck(PyTuple_GET_ITEM(edge, 0), Node_type)) {
            rc = 0;
            goto done;
        }
        PyObject *node = PyTuple_GET_ITEM(edge, 0);
        if (accumulate_grad) {
            if (mark_node_needed(exec_info, node) < 0)
                goto done;
            continue;
        }
        PyObject *info = PyDict_GetItemWithError(exec_info, node);
        if (info == NULL) {
            if (PyErr_Occurred() || (info = PyList_New(2)) == NULL)
                goto done;
            PyList_SET_ITEM(info, 0, Py_NewRef(Py_False));
            PyList_SET_ITEM(info, 1, Py_NewRef(Py_None));
            int r = PyDict_SetItem(exec_info, node, info);
            Py_DECREF(info);
            if (r < 0)
                goto done;
        }
        PyObject *captures = PyList_GET_ITEM(info, 1), *index = NULL, *pair = NULL;
        if (captures == Py_None) {
            if ((captures = PyList_New(0)) == NULL)
                goto done;
            PyList_SetItem(info, 1, captures);  /* steals; info keeps it */
        }
        if ((index = PyLong_FromSsize_t(k)) != NULL)
            pair = PyTuple_Pack(2, PyTuple_GET_ITEM(edge, 1), index);
        int r = pair == NULL ? -1 : PyList_Append(captures, pair);
        Py_XDECREF(index);
        Py_XDECREF(pair);
        if (r < 0)
            goto done;
    }
    if (mark_node_needed(exec_info, root) < 0)
        goto done;
    PyObject *edges = walk_edges(root);
    if (edges == NULL) {
        rc = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    if (PySet_Add(visited, root) < 0) {
        Py_DECREF(edges);
        goto done;
    }
    stack[depth++] = (WalkFrame){Py_NewRef(root), edges, 0};
    while (depth > 0) {
        WalkFrame *top = &stack[depth - 1];
        PyObject *child = NULL;
        while (top->next < PyTuple_GET_SIZE(top->edges)) {  /* the first edge to a node not yet visited */
            PyObject *edge = PyTuple_GET_ITEM(top->edges, top->next++);
            if (edge == Py_None)
                continue;
            int seen = PySet_Contains(visited, PyTuple_GET_ITEM(edge, 0));
            if (seen < 0)
                goto done;
            if (!seen) {
                child = PyTuple_GET_ITEM(edge, 0);
                break;
            }
        }
        if (child != NULL) {
            PyObject *child_edges = walk_edges(child);
            if (child_edges == NULL) {
                rc = PyErr_Occurred() ? -1 : 0;
                goto done;
            }
            if (PySet_Add(visited, child) < 0) {
                Py_DECREF(child_edges);
                goto done;
            }
            if (depth == cap) {
                WalkFrame *grown = PyMem_Realloc(stack, 2 * cap * sizeof(WalkFrame));
                if (grown == NULL) {
                    Py_DECREF(child_edges);
                    PyErr_NoMemory();
                    goto done;
                }
                stack = grown;
                cap *= 2;
            }
            stack[depth++] = (WalkFrame){Py_NewRef(child), child_edges, 0};
            continue;
        }
        /* every child visited: the node is needed if a child is needed or captures */
        WalkFrame done_frame = stack[--depth];
        int r = 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(done_frame.edges) && r == 0; i++) {
            PyObject *edge = PyTuple_GET_ITEM(done_frame.edges, i);
            if (edge == Py_None)
                continue;
            PyObject *info = PyDict_GetItemWithError(exec_info, PyTuple_GET_ITEM(edge, 0));
            if (info == NULL) {
                r = PyErr_Occurred() ? -1 : 0;
                continue;
            }
            if (PyList_GET_ITEM(info, 0) == Py_True || PyList_GET_ITEM(info, 1) != Py_None)
                r = mark_node_needed(exec_info, done_frame.node) < 0 ? -1 : 1;
        }
        Py_DECREF(done_frame.node);
        Py_DECREF(done_frame.edges);
        if (r < 0)
            goto done;
    }
    rc = GT_SET(gt, s_exec_info, exec_info) < 0 || GT_SET(gt, s_captured_vars, captured) < 0 ? -1 : 1;
done:
    while (depth > 0) {
        depth--;
        Py_DECREF(stack[depth].node);
        Py_DECREF(stack[depth].edges);
    }
    PyMem_Free(stack);
    Py_DECREF(items);
    Py_XDECREF(exec_info);
    Py_XDECREF(visited);
    Py_XDECREF(captured);
    return rc;
}

/* Whether the GraphTask `gt` completes plainly: no error, no final callbacks, no node left waiting for
 * gradients (1; 0 otherwise; -1 on error): mark_completed's case with nothing to post-process. */
static int
is_plain_completion(PyObject *gt)
{
    PyObject *callbacks = GT_GET(gt, s_final_callbacks), *not_ready = GT_GET(gt, s_not_ready);
    int failed = GT_TRUE(gt, s_has_error), plain = -1;
    if (callbacks != NULL && not_ready != NULL && failed >= 0)
        plain = !failed && PyList_CheckExact(callbacks) && PyList_GET_SIZE(callbacks) == 0 &&
                PyDict_CheckExact(not_ready) && PyDict_GET_SIZE(not_ready) == 0;
    Py_XDECREF(callbacks);
    Py_XDECREF(not_ready);
    return plain;
}

/* GraphTask.mark_as_completed_and_run_post_processing(): claims the GraphTask under its lock, then,
 * when there is nothing to post-process (no error, no final callbacks, no partial input buffer),
 * sets its outcome to the captured gradients and resolves its future if one was asked for.
 * Anything else goes to GraphTask._complete. Returns -1 on error. */
static int
mark_completed(PyObject *engine, PyObject *gt)
{
    PyObject *lock = GT_GET(gt, s_lock);
    if (lock == NULL || call_method0(lock, s_acquire) < 0) {
        Py_XDECREF(lock);
        return -1;
    }
    int claimed = GT_TRUE(gt, s_claimed);
    if (claimed == 0 && GT_SET(gt, s_claimed, Py_True) < 0)
        claimed = -1;
    if (call_keeping_error(lock, s_release) < 0)
        claimed = -1;
    if (claimed != 0) {
        Py_DECREF(lock);
        return claimed < 0 ? -1 : 0;
    }
    int plain = is_plain_completion(gt);
    if (plain <= 0) {
        Py_DECREF(lock);
        if (plain < 0)
            return -1;
        PyObject *r = PyObject_CallMethodNoArgs(gt, s_complete);
        Py_XDECREF(r);
        return r == NULL ? -1 : 0;
    }
    PyObject *captured = GT_GET(gt, s_captured_vars), *empty = PyList_New(0), *outcome = NULL;
    PyObject *future = NULL;
    int rc = -1;
    if (captured == NULL || empty == NULL || (outcome = PyTuple_Pack(2, captured, Py_None)) == NULL ||
        GT_SET(gt, s_captured_vars, empty) < 0 || call_method0(lock, s_acquire) < 0)
        goto done;
    if (GT_SET(gt, s_outcome, outcome) == 0 && GT_SET(gt, s_completed, Py_True) == 0)
        future = GT_GET(gt, s_future_slot);
    if (call_keeping_error(lock, s_release) < 0 || future == NULL)
        goto done;
    if (future != Py_None) {
        PyObject *r = PyObject_CallMethodOneArg(future, s_set_result, captured);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    }
    rc = 0;
done:
    Py_DECREF(lock);
    Py_XDECREF(captured);
    Py_XDECREF(empty);
    Py_XDECREF(outcome);
    Py_XDECREF(future);
    return rc;
}

/* mark_completed's plain case (no error, no final callbacks, no node left waiting for gradients) done
 * in the critical section that counted the last task down, with graph_task.lock held: claims the
 * GraphTask, takes its captured gradients (captured_vars becomes `empty`), stores the outcome
 * (`outcome`, a fresh (None, None), gets them as its first item) and completed, and gives the future
 * and the captured list (new references). It allocates nothing. The Python method takes the lock
 * twice, around the post-processing; with nothing to post-process, both sections at once, right
 * after the count, are one of its schedules. Returns 1 if it completed the GraphTask; 0, having
 * changed nothing, where mark_completed must do it (claimed already, or not the plain case); -1 on
 * error. */
static int
complete_plain(PyObject *gt, PyObject *empty, PyObject *outcome, PyObject **future, PyObject **captured)
{
    int claimed = GT_TRUE(gt, s_claimed);
    if (claimed != 0)
        return claimed < 0 ? -1 : 0;
    int plain = is_plain_completion(gt);
    if (plain <= 0)
        return plain;
    PyObject *got = GT_GET(gt, s_captured_vars), *fut = got != NULL ? GT_GET(gt, s_future_slot) : NULL;
    if (fut == NULL) {
        Py_XDECREF(got);
        return -1;
    }
    PyObject *old = PyTuple_GET_ITEM(outcome, 0);  /* None; the tuple is fresh and not shared yet */
    PyTuple_SET_ITEM(outcome, 0, Py_NewRef(got));
    Py_DECREF(old);
    if (GT_SET(gt, s_claimed, Py_True) < 0 || GT_SET(gt, s_captured_vars, empty) < 0 ||
        GT_SET(gt, s_outcome, outcome) < 0 || GT_SET(gt, s_completed, Py_True) < 0) {
        Py_DECREF(got);
        Py_DECREF(fut);
        return -1;
    }
    *future = fut;
    *captured = got;
    return 1;
}

/* engine._ready_queue_of_owner(gt): the owner's queue, read directly when the owner is the CPU. */
static PyObject *
owner_ready_queue(PyObject *engine, PyObject *gt)
{
    PyObject *owner = GT_GET(gt, s_owner);
    if (owner == NULL)
        return NULL;
    int on_cpu = PyObject_RichCompareBool(owner, cpu_device_id, Py_EQ);
    Py_DECREF(owner);
    if (on_cpu < 0)
        return NULL;
    return on_cpu ? GT_GET(gt, s_cpu_ready_queue) : PyObject_CallMethodOneArg(engine, s_ready_queue_of_owner, gt);
}

/* Engine.thread_main(graph_task, first) on the thread that owns graph_task, the plain case of
 * execute: runs `first`, then pops and runs tasks until the GraphTask completes. The same steps
 * as the Python method, in its order; its `finally` is kept (a task handed over but not run goes
 * back to the queue, the thread's current GraphTask is restored). Returns -1 on error. */
static int
drive(PyObject *engine, PyObject *graph_task, PyObject *queue, PyObject *first_node, PyObject *first_inputs)
{
    PyObject *outer = thread_local_get(&worker_tl, s_current_graph_task);
    if (outer == NULL)
        return -1;
    PyObject *current = Py_NewRef(outer), *gt = Py_NewRef(graph_task);
    PyObject *follow_node = Py_NewRef(first_node), *follow_inputs = Py_NewRef(first_inputs);
    int rc = -1;
    for (;;) {
        int completed = GT_TRUE(graph_task, s_completed);
        if (completed != 0) {
            if (completed < 0)
                goto out;
            break;
        }
        PyObject *node, *inputs;
        if (follow_node == NULL) {
            PyObject *entry = PyObject_CallMethodNoArgs(queue, s_pop);
            if (entry == NULL)
                goto out;
            if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 7) {  /* as thread_main unpacks it */
                Py_SETREF(entry, unpack_exactly(entry, 7));
                if (entry == NULL)
                    goto out;
            }
            int shutdown = PyObject_RichCompareBool(PyTuple_GET_ITEM(entry, 0), zero_int, Py_EQ);
            if (shutdown != 0) {
                Py_DECREF(entry);
                if (shutdown < 0)
                    goto out;
                break;
            }
            if (PyTuple_GET_ITEM(entry, 5) == Py_None) {  /* a wake-up: our GraphTask may have completed elsewhere */
                Py_SETREF(gt, Py_NewRef(PyTuple_GET_ITEM(entry, 4)));
                Py_DECREF(entry);
                continue;
            }
            Py_SETREF(gt, Py_NewRef(PyTuple_GET_ITEM(entry, 4)));
            node = Py_NewRef(PyTuple_GET_ITEM(entry, 5));
            inputs = Py_NewRef(PyTuple_GET_ITEM(entry, 6));
            Py_DECREF(entry);
        } else {
            node = follow_node;
            inputs = follow_inputs;
            follow_node = follow_inputs = NULL;
        }
        int failed = GT_TRUE(gt, s_has_error);
        PyObject *next = NULL;
        if (failed == 0) {
            if (gt != current) {  /* queue_callback and nested calls find the running pass here */
                if (thread_local_set(&worker_tl, s_current_graph_task, gt) < 0)
                    failed = -1;
                Py_SETREF(current, Py_NewRef(gt));
            }
            if (failed == 0) {
                PyObject *call[5] = {engine, gt, node, inputs, queue};
                next = run_task(NULL, call, 5);
                if (next == NULL)
                    failed = -1;
            }
        }
        Py_DECREF(node);
        Py_DECREF(inputs);  /* free the gradients before waiting for more work */
        if (failed < 0)
            goto out;
        if (next != NULL && next != Py_None) {
            if (!PyTuple_CheckExact(next) || PyTuple_GET_SIZE(next) != 2) {  /* as thread_main unpacks it */
                Py_SETREF(next, unpack_exactly(next, 2));
                if (next == NULL)
                    goto out;
            }
            follow_node = Py_NewRef(PyTuple_GET_ITEM(next, 0));
            follow_inputs = Py_NewRef(PyTuple_GET_ITEM(next, 1));
        }
        Py_XDECREF(next);
        /* the last task, likely (read without the lock: only a hint): the completion's objects, made before
         * taking the lock, so that nothing is allocated under it */
        PyObject *empty = NULL, *outcome = NULL, *future = NULL, *captured = NULL;
        PyObject *hint = GT_GET(gt, s_outstanding_tasks);
        if (hint == NULL)
            goto out;
        if (hint == one_int &&  /* the small int 1 is one object */
            ((empty = PyList_New(0)) == NULL || (outcome = PyTuple_Pack(2, Py_None, Py_None)) == NULL)) {
            Py_DECREF(hint);
            Py_XDECREF(empty);
            goto out;
        }
        Py_DECREF(hint);
        PyObject *lock = GT_GET(gt, s_lock);
        if (lock == NULL || call_method0(lock, s_acquire) < 0) {
            Py_XDECREF(lock);
            Py_XDECREF(empty);
            Py_XDECREF(outcome);
            goto out;
        }
        int done = add_outstanding(gt, -1), completed_here = 0;
        if (done == 0) {
            PyObject *left = GT_GET(gt, s_outstanding_tasks);
            int finished = left == NULL ? -1 : PyObject_RichCompareBool(left, zero_int, Py_EQ);
            Py_XDECREF(left);
            int completed_elsewhere = finished > 0 ? GT_TRUE(gt, s_completed) : 0;
            done = finished < 0 || completed_elsewhere < 0 ? -1 : finished && !completed_elsewhere;
        }
        if (done > 0 && outcome != NULL && (completed_here = complete_plain(gt, empty, outcome, &future, &captured)) < 0)
            done = -1;
        if (call_keeping_error(lock, s_release) < 0)
            done = -1;
        Py_DECREF(lock);
        Py_XDECREF(empty);
        Py_XDECREF(outcome);
        if (done < 0) {
            Py_XDECREF(future);
            Py_XDECREF(captured);
            goto out;
        }
        if (done) {
            if (completed_here) {  /* as mark_completed ends: the future, outside the lock */
                PyObject *r = future == Py_None ? Py_NewRef(Py_None) :
                    PyObject_CallMethodOneArg(future, s_set_result, captured);
                Py_XDECREF(r);
                Py_DECREF(future);
                Py_DECREF(captured);
                if (r == NULL)
                    goto out;
            } else if (mark_completed(engine, gt) < 0) {
                goto out;
            }
            PyObject *owner_queue = owner_ready_queue(engine, gt);
            if (owner_queue == NULL)
                goto out;
            if (owner_queue != queue) {  /* the owner may be blocked in pop(): wake it */
                PyObject *r = PyObject_CallMethodObjArgs(engine, s_wake, owner_queue, gt, NULL);
                Py_XDECREF(r);
                if (r == NULL) {
                    Py_DECREF(owner_queue);
                    goto out;
                }
            }
            Py_DECREF(owner_queue);
        }
    }
    rc = 0;
out:
    if (follow_node != NULL) {  /* our GraphTask completed elsewhere: leave the task to the queue */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (push(queue, gt, follow_node, follow_inputs) < 0) {
            rc = -1;
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        } else {
            PyErr_Restore(type, value, tb);
        }
        Py_DECREF(follow_node);
        Py_DECREF(follow_inputs);
    }
    if (thread_local_set_keeping_error(&worker_tl, s_current_graph_task, outer) < 0)
        rc = -1;
    Py_DECREF(outer);
    Py_DECREF(current);
    Py_DECREF(gt);
    return rc;
}

/* The fields GraphTask.__init__ sets, in its order; new_graph_task fills them when the class's
 * __slots__ are exactly these (else it calls the class). */
static const char *const graph_task_fields[] = {
    "has_error", "error", "outstanding_tasks", "keep_graph", "grad_mode", "lock", "not_ready", "dependencies",
    "exec_info", "captured_vars", "owner", "reentrant_depth", "exit_on_error", "_future", "_claimed", "_outcome",
    "completed", "final_callbacks", "cpu_ready_queue", "graph_root", "_nodes_in_graph", "owner_thread", "started",
    "timeout", "multithreading"};
#define N_GRAPH_TASK_FIELDS ((int)(sizeof(graph_task_fields) / sizeof(graph_task_fields[0])))

/* graph_task_fields as a tuple, for layout() */
static PyObject *
graph_task_init_fields(void)
{
    return str_tuple(graph_task_fields, N_GRAPH_TASK_FIELDS);
}

static int graph_task_layout;  /* GraphTask's __slots__ are graph_task_fields, in order: set by configure */

static int
graph_task_layout_known(void)
{
    return graph_task_layout;
}

/* Whether GraphTask's __slots__ (in graph_task_slots) are graph_task_fields, in their order. */
static int
graph_task_layout_check(void)
{
    if (graph_task_slots.n != N_GRAPH_TASK_FIELDS)
        return 0;
    for (int i = 0; i < N_GRAPH_TASK_FIELDS; i++)
        if (PyUnicode_CompareWithASCIIString(graph_task_slots.names[i], graph_task_fields[i]) != 0)
            return 0;
    return 1;
}

/* GraphTask(keep_graph, grad_mode, 0, queue) for a top-level pass: the fields its __init__ sets,
 * without its Python frame. */
static PyObject *
new_graph_task(PyObject *keep_graph, PyObject *grad_mode, PyObject *queue)
{
    if (!graph_task_layout_known() || queue == Py_None) {
        PyObject *call[4] = {keep_graph, grad_mode, zero_int, queue};
        return PyObject_Vectorcall(GraphTask_cls, call, 4, NULL);
    }
    int keep = PyObject_IsTrue(keep_graph), mode = keep < 0 ? -1 : PyObject_IsTrue(grad_mode);
    int threads = mode < 0 ? -1 : thread_local_true(&grad_tl, s_multithreading);  /* the caller's: Note [Multithreading switch] */
    if (threads < 0)
        return NULL;
    PyTypeObject *type = (PyTypeObject *)GraphTask_cls;
    PyObject *lock = PyObject_CallNoArgs(rlock_cls), *not_ready = PyDict_New(), *deps = PyDict_New();
    PyObject *captured = PyList_New(0), *callbacks = PyList_New(0), *gt = NULL;
    if (lock != NULL && not_ready != NULL && deps != NULL && captured != NULL && callbacks != NULL &&
        (gt = type->tp_alloc(type, 0)) != NULL) {
        PyObject *values[N_GRAPH_TASK_FIELDS] = {
            Py_False, Py_None, zero_int, keep ? Py_True : Py_False, mode ? Py_True : Py_False, lock, not_ready, deps,
            Py_None, captured, no_device, zero_int, Py_False, Py_None, Py_False, Py_None, Py_False, callbacks, queue,
            Py_None, Py_None, Py_None, Py_None, Py_None, threads ? Py_True : Py_False};
        for (int i = 0; i < N_GRAPH_TASK_FIELDS; i++)
            set_slot(gt, graph_task_slots.offs[i], values[i]);
    }
    Py_XDECREF(lock);
    Py_XDECREF(not_ready);
    Py_XDECREF(deps);
    Py_XDECREF(captured);
    Py_XDECREF(callbacks);
    return gt;
}

/* GraphRoot(roots, inputs): Node.__init__'s fields and the seeds, without the Python frames;
 * in anomaly mode (which records the forward trace) it calls the class. */
static PyObject *
new_graph_root(PyObject *roots, PyObject *inputs)
{
    int anomaly = class_attr_true(Anomaly_cls, s_enabled);
    if (anomaly != 0 || !PyList_CheckExact(inputs))
        return anomaly < 0 ? NULL : PyObject_CallFunctionObjArgs(GraphRoot_cls, roots, inputs, NULL);
    PyTypeObject *type = (PyTypeObject *)GraphRoot_cls;
    PyObject *edges = PySequence_Tuple(roots), *outputs = PyList_GetSlice(inputs, 0, PyList_GET_SIZE(inputs));
    PyObject *root = edges != NULL && outputs != NULL ? type->tp_alloc(type, 0) : NULL;
    if (root != NULL) {
        PyObject *empty = PyTuple_New(0);
        if (empty == NULL) {
            Py_CLEAR(root);
        } else {
            set_node_fields(root, n_off, edges, max_sequence_nr, empty);
            set_slot(root, off_root_outputs, outputs);
            Py_DECREF(empty);
        }
    }
    Py_XDECREF(edges);
    Py_XDECREF(outputs);
    return root;
}

/* new_graph_task(keep_graph, grad_mode, queue): what execute builds, for the tests to compare
 * with GraphTask(keep_graph, grad_mode, 0, queue). */
static PyObject *
new_graph_task_py(PyObject *module, PyObject *args)
{
    PyObject *keep, *mode, *queue;
    if (!PyArg_ParseTuple(args, "OOO:new_graph_task", &keep, &mode, &queue))
        return NULL;
    return new_graph_task(keep, mode, queue);
}

static PyObject *
new_graph_root_py(PyObject *module, PyObject *args)
{
    PyObject *roots, *inputs;
    if (!PyArg_ParseTuple(args, "OO:new_graph_root", &roots, &inputs))
        return NULL;
    return new_graph_root(roots, inputs);
}

static PyObject *
init_to_execute_py(PyObject *module, PyObject *args)
{
    PyObject *gt, *root, *outputs;
    int accumulate;
    if (!PyArg_ParseTuple(args, "OOOp:init_to_execute", &gt, &root, &outputs, &accumulate))
        return NULL;
    if (!configured)
        Py_RETURN_NOTIMPLEMENTED;
    int rc = init_to_execute(gt, root, outputs, accumulate);
    if (rc < 0)
        return NULL;
    return PyBool_FromLong(rc);
}

static PyObject *
new_input_buffer_py(PyObject *module, PyObject *size)
{
    return new_input_buffer(size);
}

/* What Engine._run_graph_task does first for a pass: owner_thread and started, then the GraphTask
 * into GraphTask.in_flight (Note [Passes in flight] in graph_task.py). Returns the registry (a new
 * reference) for in_flight_remove, or NULL on error. */
static PyObject *
in_flight_add(PyObject *gt)
{
    PyObject *registry = class_attr(GraphTask_cls, s_in_flight), *clock = NULL, *now = NULL;
    PyObject *ident = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
    int rc = -1;
    if (registry != NULL && !PyDict_Check(registry))
        PyErr_SetString(PyExc_TypeError, "GraphTask.in_flight must be a dict");
    else if (registry != NULL && ident != NULL && (clock = PyObject_GetAttr(GraphTask_cls, s_clock)) != NULL &&
        (now = PyObject_CallNoArgs(clock)) != NULL && GT_SET(gt, s_owner_thread, ident) == 0 &&
        GT_SET(gt, s_started, now) == 0)
        rc = PyDict_SetItem(registry, gt, Py_None);
    Py_XDECREF(ident);
    Py_XDECREF(clock);
    Py_XDECREF(now);
    if (rc < 0)
        Py_CLEAR(registry);
    return registry;
}

/* Takes the GraphTask out of the registry again, keeping a pending error. Returns -1 on error. */
static int
in_flight_remove(PyObject *registry, PyObject *gt)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int rc = PyDict_Contains(registry, gt);
    if (rc > 0)
        rc = PyDict_DelItem(registry, gt);
    if (type != NULL) {
        PyErr_Clear();
        PyErr_Restore(type, value, tb);
    }
    return rc < 0 ? -1 : 0;
}

/* execute(engine, roots, inputs, keep_graph, create_graph[, outputs, accumulate_grad]): Engine.execute
 * for a pass called outside the engine, the thread then driving its CPU work: the same steps as
 * execute, _run_graph_task's owner branch and thread_main. Seeds that do not match their roots go
 * to the Python validate_outputs, which fixes or rejects them; a pruned pass (`outputs` not empty:
 * autograd.grad, backward(inputs=...)) is marked by GraphTask.init_to_execute, as in Python. */
static PyObject *
execute(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 && nargs != 7) {
        PyErr_SetString(PyExc_TypeError,
                        "execute(engine, roots, inputs, keep_graph, create_graph[, outputs, accumulate_grad])");
        return NULL;
    }
    if (!configured)  /* nothing bound yet: Engine.execute runs the pass */
        Py_RETURN_NOTIMPLEMENTED;
    int observed = class_attr_true(Observation_cls, s_active);  /* See Note [Observing the engine] */
    if (observed != 0) {
        if (observed < 0)
            return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *engine = args[0], *roots = args[1];
    PyObject *edges = PySequence_Tuple(roots), *inputs = PySequence_List(args[2]);
    PyObject *queue = NULL, *gt = NULL, *root = NULL, *deps = NULL, *first = NULL, *result = NULL, *registry = NULL;
    if (edges == NULL || inputs == NULL)
        goto done;
    int match = outputs_match(edges, inputs);
    if (match < 0)
        goto done;
    if (!match) {
        PyObject *checked = PyObject_CallFunctionObjArgs(validate_outputs_fn, roots, inputs, NULL);
        if (checked == NULL)
            goto done;
        Py_SETREF(inputs, checked);
    }
    if ((queue = thread_local_get(&worker_tl, s_ready_queue)) == NULL)
        goto done;
    if (queue == Py_None) {
        Py_SETREF(queue, PyObject_CallNoArgs((PyObject *)ReadyQueue_type));
        if (queue == NULL || thread_local_set(&worker_tl, s_ready_queue, queue) < 0)
            goto done;
    }
    if ((gt = new_graph_task(args[3], args[4], queue)) == NULL || (root = new_graph_root(roots, inputs)) == NULL ||
        GT_SET(gt, s_graph_root, root) < 0 || (deps = GT_GET(gt, s_dependencies)) == NULL)
        goto done;
    if (!PyDict_CheckExact(deps)) {
        PyErr_SetString(PyExc_TypeError, "GraphTask.dependencies must be a dict");
        goto done;
    }
    if (count_dependencies(root, deps) < 0 || (first = PyList_New(0)) == NULL)
        goto done;
    int pruned = nargs == 7 ? PyObject_IsTrue(args[5]) : 0;  /* `if outputs:` */
    if (pruned < 0)
        goto done;
    if (pruned) {  /* graph_task.init_to_execute(graph_root, outputs, accumulate_grad) */
        int accumulate = PyObject_IsTrue(args[6]);
        int marked = accumulate < 0 ? -1 : init_to_execute(gt, root, args[5], accumulate);
        if (marked < 0)
            goto done;
        if (marked == 0) {  /* something unusual: the method itself */
            PyObject *r = PyObject_CallMethodObjArgs(gt, s_init_to_execute, root, args[5], args[6], NULL);
            if (r == NULL)
                goto done;
            Py_DECREF(r);
        }
    }
    /* _run_graph_task, owner branch: the thread drives the pass from the task's queue */
    if ((registry = in_flight_add(gt)) == NULL)
        goto done;
    if (GT_SET(gt, s_outstanding_tasks, one_int) < 0 || thread_local_set(&worker_tl, s_worker_device, cpu_device_id) < 0) {
        in_flight_remove(registry, gt);
        goto done;
    }
    PyObject *task_queue = GT_GET(gt, s_cpu_ready_queue);
    int r = task_queue == NULL || thread_local_set(&worker_tl, s_ready_queue, task_queue) < 0 ||
        GT_SET(gt, s_owner, cpu_device_id) < 0 ? -1 : drive(engine, gt, task_queue, root, first);
    Py_XDECREF(task_queue);
    if (thread_local_set_keeping_error(&worker_tl, s_worker_device, no_device) < 0 ||
        thread_local_set_keeping_error(&worker_tl, s_ready_queue, queue) < 0)
        r = -1;
    if (in_flight_remove(registry, gt) < 0)
        r = -1;
    if (r < 0)
        goto done;
    PyObject *outcome = GT_GET(gt, s_outcome);  /* graph_task.outcome(): the method raises the error */
    if (outcome != NULL && PyTuple_CheckExact(outcome) && PyTuple_GET_SIZE(outcome) == 2 &&
        PyTuple_GET_ITEM(outcome, 1) == Py_None)
        result = Py_NewRef(PyTuple_GET_ITEM(outcome, 0));
    else if (outcome != NULL)
        result = PyObject_CallMethodNoArgs(gt, s_outcome_method);
    Py_XDECREF(outcome);
done:
    Py_XDECREF(edges);
    Py_XDECREF(inputs);
    Py_XDECREF(queue);
    Py_XDECREF(gt);
    Py_XDECREF(root);
    Py_XDECREF(deps);
    Py_XDECREF(first);
    Py_XDECREF(registry);
    return result;
}

/* The seed and root edge of `tensor` as autograd.backward and autograd.grad make them with no gradient given
 * (_make_grads: ones; _engine_run_backward: gradient_edge), for the plain case: a non-leaf CPU tensor that is
 * not a view, of one floating-point element. Returns 1 with *seed and *edge set (new references), 0 having
 * made nothing where the Python path must decide (it handles or rejects everything else), -1 on error. */
static int
plain_root(PyObject *tensor, PyObject **seed, PyObject **edge)
{
    *seed = *edge = NULL;
    if (Py_TYPE(tensor) != Tensor_type)
        return 0;
    PyObject *data = slot(tensor, t_off[T_DATA]), *grad_fn = slot(tensor, t_off[T_GRAD_FN]);
    PyObject *nr = slot(tensor, t_off[T_OUTPUT_NR]);
    if (data == NULL || grad_fn == NULL || grad_fn == Py_None || nr == NULL || Py_TYPE(data) != (PyTypeObject *)ndarray_type ||
        slot(tensor, t_off[T_BASE]) != Py_None || slot(tensor, t_off[T_DEVICE]) != cpu_device ||
        slot(tensor, t_off[T_REQUIRES_GRAD]) != Py_True)
        return 0;
    PyObject *size = NULL, *dtype = NULL, *kind = NULL, *shape = NULL, *seed_arr = NULL;
    int one = -1, rc = -1;
    if (array_direct(data)) {  /* data.size == 1 */
        Py_ssize_t n = 1;
        for (int i = 0; i < ARRAY_HEAD(data)->nd; i++)
            n *= ARRAY_HEAD(data)->dimensions[i];
        one = n == 1;
    } else if ((size = PyObject_GetAttr(data, s_size)) != NULL) {
        one = PyObject_RichCompareBool(size, one_int, Py_EQ);
    }
    if (one < 0 || (dtype = array_dtype(data)) == NULL || (kind = PyObject_GetAttr(dtype, s_kind)) == NULL)
        goto done;
    if (!one || !PyUnicode_Check(kind) || PyUnicode_CompareWithASCIIString(kind, "f") != 0) {
        rc = 0;
        goto done;
    }
    if ((shape = PyObject_GetAttr(data, s_shape)) == NULL ||
        (seed_arr = PyObject_CallFunctionObjArgs(np_empty_fn, shape, dtype, NULL)) == NULL)
        goto done;
    PyObject *filled = PyObject_CallMethodOneArg(seed_arr, s_fill, one_int);
    if (filled == NULL)
        goto done;
    Py_DECREF(filled);
    if ((*seed = new_tensor(Tensor_type, t_off, seed_arr, cpu_device, zero_int)) == NULL ||
        (*edge = Edge_type->tp_alloc(Edge_type, 2)) == NULL) {
        Py_CLEAR(*seed);
        goto done;
    }
    PyTuple_SET_ITEM(*edge, 0, Py_NewRef(grad_fn));
    PyTuple_SET_ITEM(*edge, 1, Py_NewRef(nr));
    rc = 1;
done:
    Py_XDECREF(size);
    Py_XDECREF(dtype);
    Py_XDECREF(kind);
    Py_XDECREF(shape);
    Py_XDECREF(seed_arr);
    return rc;
}

/* Whether this thread is outside the engine (worker_device is NO_DEVICE); -1 on error. */
static int
outside_engine(void)
{
    PyObject *worker = thread_local_get(&worker_tl, s_worker_device);
    if (worker == NULL)
        return -1;
    int outside = worker == no_device ? 1 : PyObject_RichCompareBool(worker, no_device, Py_EQ);
    Py_DECREF(worker);
    return outside;
}

/* backward(engine, tensor, keep_graph): tensor.backward() with no other argument, as
 * autograd.backward runs it (a seed of ones, then execute), for the plain case of plain_root,
 * called outside the engine. Returns True once the pass has run, or False, having done nothing,
 * for the Python path, which handles (or rejects) everything else. */
static PyObject *
backward(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "backward(engine, tensor, keep_graph)");
        return NULL;
    }
    if (!configured)  /* nothing bound yet: the Python path */
        Py_RETURN_FALSE;
    int observed = class_attr_true(Observation_cls, s_active);  /* See Note [Observing the engine] */
    if (observed != 0) {
        if (observed < 0)
            return NULL;
        Py_RETURN_FALSE;
    }
    PyObject *seed, *edge, *roots = NULL, *seeds = NULL, *result = NULL;
    int plain = plain_root(args[1], &seed, &edge);
    if (plain <= 0)
        return plain < 0 ? NULL : Py_NewRef(Py_False);
    int outside = outside_engine();
    if (outside <= 0) {
        if (outside == 0)
            result = Py_NewRef(Py_False);
        goto done;
    }
    if ((roots = PyList_New(1)) == NULL || (seeds = PyList_New(1)) == NULL)
        goto done;
    PyList_SET_ITEM(roots, 0, Py_NewRef(edge));
    PyList_SET_ITEM(seeds, 0, Py_NewRef(seed));
    PyObject *call[5] = {args[0], roots, seeds, args[2], Py_False};
    PyObject *captured = execute(NULL, call, 5);
    if (captured != NULL) {
        Py_DECREF(captured);
        result = Py_NewRef(Py_True);
    }
done:
    Py_DECREF(seed);
    Py_DECREF(edge);
    Py_XDECREF(roots);
    Py_XDECREF(seeds);
    return result;
}

/* `value` as _as_tuple takes it, for a Tensor or a tuple or list of them: a new reference to a tuple,
 * or NULL without an error for anything else (the Python path raises for it). */
static PyObject *
tensors_tuple(PyObject *value)
{
    if (Py_TYPE(value) == Tensor_type)
        return PyTuple_Pack(1, value);
    if (PyTuple_CheckExact(value))
        return Py_NewRef(value);
    if (PyList_CheckExact(value))
        return PyList_AsTuple(value);
    return NULL;
}

/* The edge _engine_run_backward captures the gradient of input `t` at in autograd.grad (accumulate_grad
 * False): the tensor's own edge for a non-leaf, its leaf's existing AccumulateGrad (or None: never made
 * here) for a leaf. Returns 1 with *edge set (a new reference), 0 for the Python path (a view, a tensor
 * that does not require grad, which it rejects, anything not exactly a Tensor or a Parameter), -1 on error. */
static int
capture_edge(PyObject *t, PyObject **edge)
{
    *edge = NULL;
    if (Py_TYPE(t) != Tensor_type && Py_TYPE(t) != Parameter_type)  /* neither has __torch_function__ */
        return 0;
    PyObject *fn = slot(t, t_off[T_GRAD_FN]), *nr = slot(t, t_off[T_OUTPUT_NR]);
    PyObject *ref = slot(t, t_off[T_GRAD_ACC]);
    if (fn == NULL || nr == NULL || ref == NULL || slot(t, t_off[T_BASE]) != Py_None ||
        slot(t, t_off[T_REQUIRES_GRAD]) != Py_True)
        return 0;
    PyObject *node = fn;
    if (fn == Py_None) {  /* a leaf: `ref()` of its weak reference, if it has one */
        if (ref != Py_None && !PyWeakref_CheckRefExact(ref))
            return 0;
        node = ref == Py_None ? Py_None : PyWeakref_GetObject(ref);  /* borrowed; None once the accumulator is gone */
        if (node == NULL)
            return -1;
        if (node == Py_None) {
            *edge = Py_NewRef(Py_None);
            return 1;
        }
        nr = zero_int;
    }
    Py_INCREF(node);  /* held while the edge is allocated: the weak reference alone would not keep it */
    if ((*edge = Edge_type->tp_alloc(Edge_type, 2)) == NULL) {
        Py_DECREF(node);
        return -1;
    }
    PyTuple_SET_ITEM(*edge, 0, node);
    PyTuple_SET_ITEM(*edge, 1, Py_NewRef(nr));
    return 1;
}

/* grad(engine, outputs, inputs, keep_graph, create_graph, allow_unused): autograd.grad with no gradients given,
 * as grad, _make_grads and _engine_run_backward run it, for the plain case: outputs of plain_root, inputs
 * exactly Tensors that are not views (see capture_edge), called outside the engine. Returns the tuple of
 * gradients, or NotImplemented, having done nothing, for the Python path; after the pass it raises the
 * Python path's error for an input the graph did not reach unless allow_unused. The caller (autograd.grad)
 * has checked everything else that sends a call to the Python path (grad_outputs, is_grads_batched,
 * materialize_grads, only_inputs, a timeout or the watchdog, a __torch_function__ mode). */
static PyObject *
grad(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "grad(engine, outputs, inputs, keep_graph, create_graph, allow_unused)");
        return NULL;
    }
    if (!configured)  /* nothing bound yet: the Python path */
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *outs = tensors_tuple(args[1]), *ins = outs != NULL ? tensors_tuple(args[2]) : NULL;
    PyObject *roots = NULL, *seeds = NULL, *edges = NULL, *captured = NULL, *result = NULL;
    if (ins == NULL || PyTuple_GET_SIZE(outs) == 0 || PyTuple_GET_SIZE(ins) == 0) {
        result = PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
        goto done;
    }
    Py_ssize_t n_out = PyTuple_GET_SIZE(outs), n_in = PyTuple_GET_SIZE(ins);
    if ((roots = PyList_New(n_out)) == NULL || (seeds = PyList_New(n_out)) == NULL || (edges = PyList_New(n_in)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n_out; i++) {
        PyObject *seed, *edge;
        int plain = plain_root(PyTuple_GET_ITEM(outs, i), &seed, &edge);
        if (plain <= 0) {
            result = plain < 0 ? NULL : Py_NewRef(Py_NotImplemented);
            goto done;
        }
        PyList_SET_ITEM(roots, i, edge);
        PyList_SET_ITEM(seeds, i, seed);
    }
    for (Py_ssize_t i = 0; i < n_in; i++) {
        PyObject *edge;
        int plain = capture_edge(PyTuple_GET_ITEM(ins, i), &edge);
        if (plain <= 0) {
            result = plain < 0 ? NULL : Py_NewRef(Py_NotImplemented);
            goto done;
        }
        PyList_SET_ITEM(edges, i, edge);
    }
    int outside = outside_engine();
    if (outside <= 0) {
        if (outside == 0)
            result = Py_NewRef(Py_NotImplemented);
        goto done;
    }
    PyObject *call[7] = {args[0], roots, seeds, args[3], args[4], edges, Py_False};
    captured = execute(NULL, call, 7);
    if (captured == NULL || captured == Py_NotImplemented) {
        result = Py_XNewRef(captured);
        goto done;
    }
    if (!PyList_CheckExact(captured) || PyList_GET_SIZE(captured) != n_in) {
        PyErr_SetString(PyExc_RuntimeError, "grad: the pass captured a gradient per input");  /* _internal_assert */
        goto done;
    }
    int allow_unused = PyObject_IsTrue(args[5]);
    if (allow_unused < 0)
        goto done;
    for (Py_ssize_t i = 0; !allow_unused && i < n_in; i++)
        if (PyList_GET_ITEM(captured, i) == Py_None) {
            PyErr_Format(PyExc_RuntimeError, "The differentiated Tensor at index %zd appears to not have been used in "
                         "the graph. Set allow_unused=True if this is the desired behavior.", i);
            goto done;
        }
    result = PyList_AsTuple(captured);
done:
    Py_XDECREF(outs);
    Py_XDECREF(ins);
    Py_XDECREF(roots);
    Py_XDECREF(seeds);
    Py_XDECREF(edges);
    Py_XDECREF(captured);
    return result;
}

static PyMethodDef methods[] = {
    {"compute_dependencies", compute_dependencies, METH_VARARGS,
     "compute_dependencies(root, dependencies): Engine.compute_dependencies, compiled; NotImplemented before "
     "configure."},
    {"backward", (PyCFunction)(void (*)(void))backward, METH_FASTCALL,
     "backward(engine, tensor, keep_graph): tensor.backward() of a plain tensor, compiled; False if not run."},
    {"grad", (PyCFunction)(void (*)(void))grad, METH_FASTCALL,
     "grad(engine, outputs, inputs, keep_graph, create_graph, allow_unused): autograd.grad with no gradients "
     "given, compiled; NotImplemented if not run."},
    {"new_graph_task", new_graph_task_py, METH_VARARGS,
     "new_graph_task(keep_graph, grad_mode, queue): the GraphTask execute builds (for tests)."},
    {"new_graph_root", new_graph_root_py, METH_VARARGS,
     "new_graph_root(roots, inputs): the GraphRoot execute builds (for tests)."},
    {"new_input_buffer", new_input_buffer_py, METH_O,
     "new_input_buffer(size): the InputBuffer the loop builds for a node with several producers (for tests)."},
    {"execute", (PyCFunction)(void (*)(void))execute, METH_FASTCALL,
     "execute(engine, roots, inputs, keep_graph, create_graph[, outputs, accumulate_grad]): Engine.execute of a "
     "pass outside the engine, compiled; NotImplemented before configure."},
    {"init_to_execute", init_to_execute_py, METH_VARARGS,
     "init_to_execute(graph_task, graph_root, outputs, accumulate_grad): GraphTask.init_to_execute as execute "
     "runs it; False, having changed nothing, where it leaves the case to the method (for tests)."},
    {"configure", configure, METH_O,
     "configure(ns): binds the classes, functions and values the loop works with from the attributes of ns."},
    {"is_configured", is_configured, METH_NOARGS, "is_configured(): whether configure(ns) has succeeded."},
    {"layout", layout, METH_NOARGS,
     "layout(): what the loop reads of the Python objects: namespace entries, slot offsets, tuple fields, "
     "attribute names."},
    {"read_slot", read_slot_py, METH_VARARGS, "read_slot(obj, offset): the object at that slot offset (for tests)."},
    {"run_task", (PyCFunction)(void (*)(void))run_task, METH_FASTCALL,
     "run_task(engine, graph_task, node, inputs, queue): Engine._run_task, compiled; see the "
     "comment at the top of _engine_loop.c."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_engine_loop",
    "The engine's per-node loop in C; see Note [The compiled loop] in autograd/engine.py.", -1, methods,
};

PyMODINIT_FUNC
PyInit__engine_loop(void)
{
    if (intern_all(interned, N_INTERNED) < 0)
        return NULL;
    return PyModule_Create(&module_def);
}
