/*
 * Error codes shared by every stormwatch module. Functions return sw_err_t
 * (SW_OK == 0, errors negative); sw_err2str() gives a short text. Modules
 * that parse user input also fill an errstr buffer with a sentence naming
 * the input, the value and what was expected.
 */
#ifndef SW_ERR_H
#define SW_ERR_H

#include <stddef.h>

typedef enum sw_err_e {
    SW_OK = 0,
    SW_ERR_INVALID_ARG = -1, /**< an argument or input value is invalid */
    SW_ERR_PARSE = -2,       /**< input text could not be parsed */
    SW_ERR_IO = -3,          /**< a read or write failed */
    SW_ERR_LIMIT = -4,       /**< a configured limit was reached */
    SW_ERR_TRUNCATED = -5,   /**< input ended in the middle of a unit */
    SW_ERR_NOT_FOUND = -6,   /**< a named thing does not exist */
    SW_ERR_STATE = -7,       /**< call not allowed in the current state */
    SW_ERR_KAFKA = -8,       /**< a Kafka operation failed */
    SW_ERR_AVRO = -9,        /**< an Avro operation failed */
    SW_ERR_CLOCK = -10,      /**< a timestamp is implausible (out of time) */
    SW_ERR_PENDING = -11,    /**< not yet: an answer is on its way (ask again later) */
    SW_ERR__CNT = 12         /**< number of codes (sentinel) */
} sw_err_t;

/**
 * @brief Short description of an error code.
 * @returns a string with static storage duration (never NULL).
 */
const char *sw_err2str(sw_err_t err);

/**
 * @brief Write a printf-formatted message into errstr (truncated to
 *        errstr_size, always NUL-terminated when errstr_size > 0).
 * @remark The one way the core formats an error: it keeps stdio out of the
 *         core's own translation units.
 */
void sw_errfmt(char *errstr, size_t errstr_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* SW_ERR_H */
