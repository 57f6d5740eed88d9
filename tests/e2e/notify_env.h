/*
 * What the test_notify_e2e_* tests share: each case's environment (its own
 * mock cluster, notify group and directory), producing records, the notify
 * daemon, and the scripted HTTP server (libmicrohttpd) standing in for
 * PagerDuty, a webhook or Alertmanager.
 */
#ifndef NOTIFY_ENV_H
#define NOTIFY_ENV_H

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "sw_daemon.h"
#include "sw_notify.h"
#include "sw_proc.h"
#include "sw_testlib.h"

typedef struct env_s {
    char dir[1024];
    const char *boot;
    sw_test_mock_t mock;
} env_t;

void env_start(env_t *e, const char *name);

void env_stop(env_t *e);

int free_port(void);

/* Lines of a file (caller frees each and the array). */
int read_lines(const char *path, char ***out);

void free_lines(char **v, int n);

/* @p line with every "job-14" replaced by @p job (caller frees). */
char *rename_job(const char *line, const char *job);

void produce(const char *boot, const char *topic, int32_t partition, const char *key, char **values,
             int n);

bool wait_committed(const char *boot, const char *group, const char *topic, int parts, int64_t want,
                    int64_t timeout_ms);

/* notify as TAG with the common settings plus @p extra (NULL-terminated -X
 * values), started. */
void start_notify(sw_test_daemon_t *d, const env_t *e, const char *group, const char *tag,
                  char *const *extra);

/* ---- the scripted HTTP server ----------------------------------------------- */

typedef enum ans_e { ANS_OK, ANS_429, ANS_500, ANS_503, ANS_TIMEOUT, ANS_KILL } ans_t;

typedef struct req_s {
    char path[16];
    char *body;
    char signature[80];
    char auth[128]; /* the Authorization header */
    int status;     /* what the client was answered (0: never saw an answer) */
    int64_t at_ms;  /* arrival */
} req_t;

typedef struct srv_s {
    struct MHD_Daemon *d;
    int port;
    pthread_mutex_t lock;
    req_t reqs[512];
    int n;
    const ans_t *pd_script, *wh_script; /* by request number, then ANS_OK */
    int n_pd_script, n_wh_script;
    int n_pd, n_wh;
    pid_t kill_pid;    /* ANS_KILL: SIGKILL this process */
    volatile int down; /* every request answered 500 (an outage), under lock */
} srv_t;

typedef struct conn_s {
    sw_buf_t body;
} conn_t;

enum MHD_Result on_req(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                       const char *version, const char *upload, size_t *upload_size,
                       void **con_cls);

void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
             enum MHD_RequestTerminationCode toe);

void srv_start(srv_t *s);

void srv_stop(srv_t *s);

/* The records `stormwatch replay` gives for gen14 with window.samples=32
 * and stale.ms=0 (trigger, resolve, trigger, and a summary that closes the
 * open second episode), for job @p job. */
int job_records(const env_t *e, const char *job, char ***out);

#endif /* NOTIFY_ENV_H */
