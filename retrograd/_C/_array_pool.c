/* Large NumPy arrays in their own mappings, kept for reuse: see Note [Large arrays apart] in
 * retrograd/_runtime.py.
 *
 * A NumPy memory handler (PyDataMem_Handler, NumPy 1.22 and later): requests of `threshold` bytes
 * and more get a mapping of their own (mmap), rounded up to whole pages; smaller requests, and every
 * block this pool did not make, go to NumPy's default handler unchanged. A freed mapping is kept in
 * a small cache (at most `cache_limit` bytes) and handed to the next large request: the smallest that
 * fits serves it, its tail staying cached; the largest is lengthened with mremap when none is large
 * enough. A request therefore maps new memory only when
 * nothing is cached, so the pages the pool holds never exceed the most its live arrays held at once.
 *
 * NumPy calls a data handler with the GIL held (its default handler's block cache relies on that),
 * so the pool's state needs no lock of its own. Linux only (mremap); elsewhere install() does nothing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>

#ifdef __linux__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct {
    char *base;
    size_t len;
} Block;

/* A live array: its data pointer, `offset` bytes into its mapping (Note [Large arrays apart]: no two
 * large arrays at the same place of their pages). */
typedef struct {
    char *ptr;
    char *base;
    size_t len;
} Live;

#define MAX_CACHED 64

static size_t threshold = (size_t)1 << 20;
static size_t cache_limit = (size_t)256 << 20;
static size_t page = 4096;
static PyDataMem_Handler *fallback;      /* NumPy's default handler */
static PyObject *fallback_capsule;       /* keeps it alive */

static Block cached[MAX_CACHED];
static int n_cached;
static size_t cached_bytes;

/* The live mappings, by base address: open addressing with linear probing. */
static Live *live;
static size_t live_cap, live_n, live_bytes;
static unsigned int colour;

static unsigned long long n_mapped, n_reused, n_resized, n_unmapped;

static size_t
slot_of(const char *base, size_t cap)
{
    return (size_t)((((unsigned long long)(uintptr_t)base >> 12) * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static int
live_grow(void)
{
    size_t cap = live_cap ? live_cap * 2 : 64;
    Live *table = calloc(cap, sizeof(Live));
    if (table == NULL) {
        return -1;
    }
    for (size_t i = 0; i < live_cap; i++) {
        if (live[i].ptr != NULL) {
            size_t j = slot_of(live[i].ptr, cap);
            while (table[j].ptr != NULL) {
                j = (j + 1) & (cap - 1);
            }
            table[j] = live[i];
        }
    }
    free(live);
    live = table;
    live_cap = cap;
    return 0;
}

static int
live_add(char *ptr, char *base, size_t len)
{
    if (2 * (live_n + 1) > live_cap && live_grow() < 0) {
        return -1;
    }
    size_t j = slot_of(ptr, live_cap);
    while (live[j].ptr != NULL) {
        j = (j + 1) & (live_cap - 1);
    }
    live[j].ptr = ptr;
    live[j].base = base;
    live[j].len = len;
    live_n++;
    live_bytes += len;
    return 0;
}

/* The index of the live array at `ptr`, or -1. */
static long
live_find(const char *ptr)
{
    if (live_n == 0) {
        return -1;
    }
    size_t j = slot_of(ptr, live_cap);
    while (live[j].ptr != NULL) {
        if (live[j].ptr == ptr) {
            return (long)j;
        }
        j = (j + 1) & (live_cap - 1);
    }
    return -1;
}

/* Removes entry j, moving later entries of its probe run back (no tombstones). */
static void
live_remove(size_t j)
{
    live_n--;
    live_bytes -= live[j].len;
    live[j].ptr = NULL;
    size_t i = j;
    for (;;) {
        i = (i + 1) & (live_cap - 1);
        if (live[i].ptr == NULL) {
            return;
        }
        size_t home = slot_of(live[i].ptr, live_cap);
        /* entry i may move to the hole at j when its home is not in (j, i] (cyclically) */
        if ((j < i) ? (home <= j || home > i) : (home <= j && home > i)) {
            live[j] = live[i];
            live[i].ptr = NULL;
            j = i;
        }
    }
}

static size_t
round_to_pages(size_t size)
{
    return (size + page - 1) & ~(page - 1);
}

static void
cache_remove(int i)
{
    cached_bytes -= cached[i].len;
    cached[i] = cached[--n_cached];
}

/* Returns every cached mapping but `keep` (an index, or -1) to the system. */
static void
cache_release_all_but(int keep)
{
    Block kept = keep >= 0 ? cached[keep] : (Block){NULL, 0};
    for (int i = 0; i < n_cached; i++) {
        if (i != keep) {
            munmap(cached[i].base, cached[i].len);
            n_unmapped++;
        }
    }
    n_cached = 0;
    cached_bytes = 0;
    if (keep >= 0) {
        cached[n_cached++] = kept;
        cached_bytes = kept.len;
    }
}

/* A mapping of at least `size` bytes (zeroed when `zero`). The smallest cached mapping that holds it
 * serves it, its tail staying in the cache; where none is large enough, the largest is lengthened
 * and the others are returned to the system, so that new pages are mapped only while the cache holds
 * none: the pool's pages then never exceed the most that its live arrays held at once. */
static void *
pool_take(size_t size, int zero)
{
    if (size > ((size_t)-1) / 2) {
        return NULL;
    }
    /* Each array starts at another multiple of 64 bytes into its first page (64 places in turn): arrays
     * all at the start of their pages made every elementwise op's loads and stores collide in the
     * caches (4K aliasing), a few percent slower than the heap's arbitrary offsets. */
    size_t offset = (size_t)((colour++ * 17u) & 63u) * 64u;
    size_t len = round_to_pages(size + offset);
    int best = -1, largest = -1;
    for (int i = 0; i < n_cached; i++) {
        if (cached[i].len >= len && (best < 0 || cached[i].len < cached[best].len)) {
            best = i;
        }
        if (largest < 0 || cached[i].len > cached[largest].len) {
            largest = i;
        }
    }
    char *base;
    if (best >= 0) {
        Block b = cached[best];
        if (b.len > len) {  /* the tail stays cached */
            cached[best].base = b.base + len;
            cached[best].len = b.len - len;
            cached_bytes -= len;
        }
        else {
            cache_remove(best);
        }
        if (zero) {
            memset(b.base + offset, 0, size);
        }
        base = b.base;
        n_reused++;
    }
    else if (largest >= 0) {
        cache_release_all_but(largest);
        Block b = cached[0];
        cache_remove(0);
        void *moved = mremap(b.base, b.len, len, MREMAP_MAYMOVE);  /* new pages come zeroed */
        if (moved == MAP_FAILED) {  /* e.g. a range over two kernel mappings: map afresh */
            munmap(b.base, b.len);
            n_unmapped++;
            goto fresh;
        }
        if (zero) {
            memset(moved, 0, b.len);
        }
        base = moved;
        n_resized++;
    }
    else {
    fresh:
        base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) {
            return NULL;
        }
#ifdef MADV_HUGEPAGE
        if (len >= ((size_t)4 << 20)) {  /* as NumPy's own handler does for arrays of 4 MiB and more */
            madvise(base, len, MADV_HUGEPAGE);
        }
#endif
        n_mapped++;
    }
    if (live_add(base + offset, base, len) < 0) {
        munmap(base, len);
        return NULL;
    }
    return base + offset;
}

/* Returns live entry j's mapping to the cache, joined to a cached neighbour where it has one; to the
 * system when the cache is full. */
static void
pool_give(size_t j)
{
    Block b = {live[j].base, live[j].len};
    live_remove(j);
    if (cached_bytes + b.len > cache_limit) {
        munmap(b.base, b.len);
        n_unmapped++;
        return;
    }
    for (int i = 0; i < n_cached; i++) {
        if (cached[i].base + cached[i].len == b.base || b.base + b.len == cached[i].base) {
            Block n = cached[i];
            cache_remove(i);
            b.base = n.base < b.base ? n.base : b.base;
            b.len += n.len;
            i = -1;  /* it may now touch another */
        }
    }
    if (n_cached == MAX_CACHED) {  /* return the smallest */
        int smallest = 0;
        for (int i = 1; i < n_cached; i++) {
            if (cached[i].len < cached[smallest].len) {
                smallest = i;
            }
        }
        munmap(cached[smallest].base, cached[smallest].len);
        n_unmapped++;
        cache_remove(smallest);
    }
    cached[n_cached++] = b;
    cached_bytes += b.len;
}

static void *
pool_malloc(void *ctx, size_t size)
{
    if (size >= threshold) {
        return pool_take(size, 0);
    }
    return fallback->allocator.malloc(fallback->allocator.ctx, size);
}

static void *
pool_calloc(void *ctx, size_t nelem, size_t elsize)
{
    if (elsize != 0 && nelem > ((size_t)-1) / elsize) {
        return NULL;
    }
    if (nelem * elsize >= threshold) {
        return pool_take(nelem * elsize, 1);
    }
    return fallback->allocator.calloc(fallback->allocator.ctx, nelem, elsize);
}

static void *
pool_realloc(void *ctx, void *ptr, size_t new_size)
{
    long j = ptr == NULL ? -1 : live_find(ptr);
    if (j < 0) {  /* not the pool's: it stays with NumPy's handler, whatever its new size */
        return fallback->allocator.realloc(fallback->allocator.ctx, ptr, new_size);
    }
    Live b = live[j];
    size_t offset = (size_t)(b.ptr - b.base);
    if (new_size >= threshold) {
        size_t len = round_to_pages(new_size + offset);
        if (len == b.len) {
            return ptr;
        }
        char *moved = mremap(b.base, b.len, len, MREMAP_MAYMOVE);
        if (moved == MAP_FAILED) {  /* e.g. a mapping cut from two joined ones: copy into a new one */
            size_t keep = b.len - offset < new_size ? b.len - offset : new_size;
            char *fresh = pool_take(new_size, 0);
            if (fresh == NULL) {
                return NULL;
            }
            memcpy(fresh, ptr, keep);
            pool_give((size_t)live_find(ptr));  /* pool_take may have moved the table's entries */
            return fresh;
        }
        live_remove((size_t)j);
        if (live_add(moved + offset, moved, len) < 0) {  /* cannot fail: an entry was just removed */
            return NULL;
        }
        n_resized++;
        return moved + offset;
    }
    void *small = fallback->allocator.malloc(fallback->allocator.ctx, new_size);
    if (small == NULL) {
        return NULL;
    }
    memcpy(small, ptr, new_size);
    pool_give((size_t)j);
    return small;
}

static void
pool_free(void *ctx, void *ptr, size_t size)
{
    long j = ptr == NULL ? -1 : live_find(ptr);
    if (j >= 0) {
        pool_give((size_t)j);
        return;
    }
    fallback->allocator.free(fallback->allocator.ctx, ptr, size);
}

static PyDataMem_Handler pool_handler = {
    "retrograd_array_pool",
    1,
    {NULL, pool_malloc, pool_calloc, pool_realloc, pool_free},
};

static PyObject *pool_capsule;
#endif /* __linux__ */

PyDoc_STRVAR(install_doc,
"install(threshold, cache_limit) -> bool\n\n"
"Makes the pool NumPy's memory handler in the calling thread's context (and the contexts made from it):\n"
"requests of `threshold` bytes and more are served by the pool, which keeps up to `cache_limit` bytes of\n"
"freed mappings. Returns False where the pool is not available (not Linux).");

static PyObject *
install(PyObject *self, PyObject *args)
{
    Py_ssize_t thr, limit;
    if (!PyArg_ParseTuple(args, "nn", &thr, &limit)) {
        return NULL;
    }
#if defined(__linux__) && !defined(Py_GIL_DISABLED)  /* the pool's state relies on the GIL */
    if (thr <= 0 || limit < 0) {
        PyErr_SetString(PyExc_ValueError, "install() expects a positive threshold and a non-negative cache limit");
        return NULL;
    }
    if (fallback == NULL) {
        /* NumPy's default handler: the capsule NumPy exports, named "mem_handler" */
        fallback_capsule = PyDataMem_DefaultHandler;
        Py_INCREF(fallback_capsule);
        fallback = PyCapsule_GetPointer(fallback_capsule, "mem_handler");
        if (fallback == NULL) {
            Py_CLEAR(fallback_capsule);
            return NULL;
        }
        long sz = sysconf(_SC_PAGESIZE);
        if (sz > 0) {
            page = (size_t)sz;
        }
    }
    threshold = (size_t)thr;
    cache_limit = (size_t)limit;
    if (pool_capsule == NULL) {
        pool_capsule = PyCapsule_New(&pool_handler, "mem_handler", NULL);
        if (pool_capsule == NULL) {
            return NULL;
        }
    }
    PyObject *old = PyDataMem_SetHandler(pool_capsule);
    if (old == NULL) {
        return NULL;
    }
    Py_DECREF(old);
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

PyDoc_STRVAR(release_cached_doc,
"release_cached() -> int\n\n"
"Returns every cached mapping to the system; returns how many bytes that was.");

static PyObject *
release_cached(PyObject *self, PyObject *noargs)
{
    size_t bytes = 0;
#ifdef __linux__
    while (n_cached > 0) {
        Block b = cached[--n_cached];
        munmap(b.base, b.len);
        bytes += b.len;
        n_unmapped++;
    }
    cached_bytes = 0;
#endif
    return PyLong_FromSize_t(bytes);
}

PyDoc_STRVAR(stats_doc,
"stats() -> dict\n\n"
"The pool's counts: live and cached mappings and bytes, and how many mappings were made, reused,\n"
"resized and returned, with the threshold and the cache limit.");

static PyObject *
stats(PyObject *self, PyObject *noargs)
{
#ifdef __linux__
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:K,s:K,s:K,s:K,s:n,s:n}",
                         "live", (Py_ssize_t)live_n, "live_bytes", (Py_ssize_t)live_bytes,
                         "cached", (Py_ssize_t)n_cached, "cached_bytes", (Py_ssize_t)cached_bytes,
                         "mapped", n_mapped, "reused", n_reused, "resized", n_resized, "unmapped", n_unmapped,
                         "threshold", (Py_ssize_t)threshold, "cache_limit", (Py_ssize_t)cache_limit);
#else
    return PyDict_New();
#endif
}

static PyMethodDef methods[] = {
    {"install", install, METH_VARARGS, install_doc},
    {"release_cached", release_cached, METH_NOARGS, release_cached_doc},
    {"stats", stats, METH_NOARGS, stats_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_array_pool",
    "Large NumPy arrays in their own mappings, kept for reuse; see Note [Large arrays apart].", -1, methods,
};

PyMODINIT_FUNC
PyInit__array_pool(void)
{
    import_array();
    return PyModule_Create(&module_def);
}
