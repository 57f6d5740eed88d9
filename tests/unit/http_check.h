/*
 * What the test_http_* tests share: checks of the Prometheus exposition
 * format, a histogram read back from it, and a small socket HTTP client.
 */
#ifndef HTTP_CHECK_H
#define HTTP_CHECK_H

#include "sw_http.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "sw_analysis.h"
#include "sw_log.h"
#include "sw_metrics.h"
#include "sw_testlib.h"

/* ---- exposition checks ------------------------------------------------ */

bool name_char(char c, bool first);

bool ends_with(const char *s, size_t n, const char *suffix);

/* Check one sample line against the family declared before it.
 * @returns NULL when fine, else what is wrong. */
const char *check_sample(const char *line, size_t len, const char *fam, const char *type);

/* Whole-text checks of the 0.0.4 format as stormwatch writes it: every
 * family has one HELP line followed by its TYPE line, before its samples;
 * no family appears twice; samples belong to the family above them. */
int check_exposition(const char *text);

/* The value of the sample named exactly @p series (name and labels). */
bool sample_value(const char *text, const char *series, double *v);

#endif /* HTTP_CHECK_H */
