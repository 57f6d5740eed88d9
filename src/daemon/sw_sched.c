/* The round/pass scheduler (see sw_sched.h). */
#include "sw_sched.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"

typedef struct thr_s {
    struct sw_sched_s *s;
    int id;
    pthread_t th;
} thr_t;

struct sw_sched_s {
    sw_sched_work_fn work;
    int nthreads; /* the caller's included; set before the threads start */
    thr_t *thr;   /* [1, nthreads) run */
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    /* Under lock: */
    uint64_t gen; /* moves when a pass starts */
    int busy;     /* threads still in the pass */
    bool quit;
    const void *pass;  /* the pass's view */
    void *const *jobs; /* the pass's jobs, in the order they are taken */
    size_t njobs;
    atomic_size_t next;   /* the next job to take: the one counter the workers share */
    struct keyed_s *keys; /* the caller's: scratch of order() */
    size_t capkeys;
};

static void take_jobs(sw_sched_t *s, const void *pass, void *const *jobs, size_t njobs, int id)
{
    for (;;) {
        size_t j = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed);
        if (j >= njobs) return;
        s->work(pass, id, jobs[j]);
    }
}

static void *thread_main(void *arg)
{
    thr_t *t = arg;
    sw_sched_t *s = t->s;
    uint64_t seen = 0;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->quit && s->gen == seen) pthread_cond_wait(&s->go, &s->lock);
        if (s->quit) break;
        seen = s->gen;
        const void *pass = s->pass;
        void *const *jobs = s->jobs;
        size_t njobs = s->njobs;
        pthread_mutex_unlock(&s->lock);
        take_jobs(s, pass, jobs, njobs, t->id);
        pthread_mutex_lock(&s->lock);
        if (--s->busy == 0) pthread_cond_signal(&s->done);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

sw_sched_t *sw_sched_new(int threads, sw_sched_work_fn work, int *started, char *errstr,
                         size_t errstr_size)
{
    sw_sched_t *s = sw_calloc(1, sizeof(*s));
    s->work = work;
    if (threads < 1) threads = 1;
    s->thr = sw_calloc((size_t)threads, sizeof(*s->thr));
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->go, NULL);
    pthread_cond_init(&s->done, NULL);
    atomic_init(&s->next, 0);
    s->nthreads = 1;
    if (errstr_size) errstr[0] = '\0';
    for (int i = 1; i < threads; i++) {
        thr_t *t = &s->thr[i];
        t->s = s;
        t->id = i;
        int e = pthread_create(&t->th, NULL, thread_main, t);
        if (e) {
            snprintf(errstr, errstr_size, "cannot start worker thread %d of %d: %s", i + 1, threads,
                     strerror(e));
            break;
        }
        char name[32]; /* top, perf and gdb show which thread is which */
        snprintf(name, sizeof(name), "sw-worker-%d", i);
        name[15] = '\0'; /* the kernel's limit, 15 characters */
        pthread_setname_np(t->th, name);
        s->nthreads++;
    }
    *started = s->nthreads;
    return s;
}

void sw_sched_destroy(sw_sched_t *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    s->quit = true;
    pthread_cond_broadcast(&s->go);
    pthread_mutex_unlock(&s->lock);
    for (int i = 1; i < s->nthreads; i++) pthread_join(s->thr[i].th, NULL);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->go);
    pthread_cond_destroy(&s->done);
    free(s->thr);
    free(s->keys);
    free(s);
}

int sw_sched_threads(const sw_sched_t *s)
{
    return s->nthreads;
}

/* One pass: every job to exactly one worker; returns when all are done. */
static void run_pass(sw_sched_t *s, const void *pass, void *const *jobs, size_t njobs)
{
    atomic_store_explicit(&s->next, 0, memory_order_relaxed);
    if (s->nthreads <= 1 || njobs <= 1) {
        take_jobs(s, pass, jobs, njobs, 0);
        return;
    }
    pthread_mutex_lock(&s->lock);
    s->pass = pass;
    s->jobs = jobs;
    s->njobs = njobs;
    s->busy = s->nthreads - 1;
    s->gen++;
    pthread_cond_broadcast(&s->go);
    pthread_mutex_unlock(&s->lock);
    take_jobs(s, pass, jobs, njobs, 0);
    pthread_mutex_lock(&s->lock);
    while (s->busy > 0) pthread_cond_wait(&s->done, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

typedef struct keyed_s {
    size_t left, at; /* at: the order before, so that ties keep it */
    void *job;
} keyed_t;

static int by_left_desc(const void *a, const void *b)
{
    const keyed_t *x = a, *y = b;
    if (x->left != y->left) return x->left < y->left ? 1 : -1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Largest first: the pass ends when its longest job does. */
static void order(sw_sched_t *s, void **jobs, size_t n, size_t (*left)(const void *))
{
    if (n < 2) return;
    if (s->capkeys < n) {
        s->keys = sw_reallocarray(s->keys, n, sizeof(*s->keys));
        s->capkeys = n;
    }
    for (size_t i = 0; i < n; i++) s->keys[i] = (keyed_t){left(jobs[i]), i, jobs[i]};
    qsort(s->keys, n, sizeof(*s->keys), by_left_desc);
    for (size_t i = 0; i < n; i++) jobs[i] = s->keys[i].job;
}

size_t sw_sched_round(sw_sched_t *s, const void *pass, void **jobs, size_t njobs,
                      const sw_sched_hooks_t *h)
{
    size_t passes = 0;
    while (njobs > 0 && !(h->stop && h->stop(h->ctx))) {
        order(s, jobs, njobs, h->left);
        if (h->begin) h->begin(h->ctx, jobs, njobs);
        run_pass(s, pass, jobs, njobs);
        passes++;
        size_t k = 0;
        for (size_t j = 0; j < njobs; j++) {
            h->apply(h->ctx, jobs[j]);
            if (h->left(jobs[j]) > 0) jobs[k++] = jobs[j]; /* stopped at a record */
        }
        njobs = k;
    }
    return passes;
}
