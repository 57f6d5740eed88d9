/*
 * Keyed hashing for every table whose keys come from the input (job ids,
 * hosts, sessions): SipHash-1-3 with a 128-bit key. A process picks a random
 * key at start (sw_hash_key_random), so nobody outside can choose ids that
 * collide in its tables (hash flooding). The core receives the key as a
 * value in its parameters; it never reads randomness itself.
 */
#ifndef SW_HASH_H
#define SW_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** A SipHash key. All zero is a valid (fixed, predictable) key: tests. */
typedef struct sw_hash_key_s {
    uint64_t k0, k1;
} sw_hash_key_t;

/** @brief SipHash-1-3 of @p len bytes at @p p (borrowed) under @p key. */
uint64_t sw_siphash13(const sw_hash_key_t *key, const void *p, size_t len);

/**
 * @brief Fill @p key from the kernel's random source (getrandom).
 * @returns false when no randomness could be read (the key is then left
 *          derived from the time and the process id: still unknown outside).
 */
bool sw_hash_key_random(sw_hash_key_t *key);

#endif /* SW_HASH_H */
