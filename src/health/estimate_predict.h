/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_ESTIMATE_PREDICT_H
#define ENTROPYD_ESTIMATE_PREDICT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * SP 800-90B's predictors (6.3.7 to 6.3.10) over a whole string, as
 * ea_non_iid runs them: each predicts every symbol from those before it,
 * and its estimate comes from how often it was right (C of N) and its
 * longest run of right guesses (estimate_predictor_formula). Symbols are
 * 0..k-1, one per byte (ea_non_iid's translated symbols); bit strings are
 * also taken packed, most significant bit first, where that is faster.
 */

/* Ones in a word: the instruction in PREDICT_POPCNT functions on x86, else libgcc's. */
#define predict_ones(v) ((unsigned)__builtin_popcountll(v))
/* A function built twice on x86-64, with POPCNT and without, picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PREDICT_POPCNT __attribute__((target_clones("popcnt", "default")))
#else
#define PREDICT_POPCNT
#endif

/* What one predictor did. */
struct estimate_prediction {
	double h;          /* bits per symbol; negative when not run */
	uint64_t correct;  /* C */
	uint64_t n;        /* N, the predictions counted */
	uint64_t run;      /* the longest run of correct ones (r - 1) */
};

/* 6.3.7 MultiMCW: the most common symbol in windows of 63, 255, 1023, 4095 (n > 4095). */
bool estimate_predict_mcw(const uint8_t *symbols, uint64_t n, unsigned k,
    struct estimate_prediction *);
/* 6.3.7 on a bit string (0 or 1 a byte): the windows' majorities. */
bool estimate_predict_mcw_bits(const uint8_t *bits, uint64_t n, struct estimate_prediction *);
/* 6.3.8 Lag prediction on symbols. */
bool estimate_predict_lag(const uint8_t *symbols, uint64_t n, unsigned k,
    struct estimate_prediction *);
/* 6.3.8 Lag prediction on n bits packed (16 readable bytes past the end). */
bool estimate_predict_lag_bits(const uint8_t *packed, uint64_t n, struct estimate_prediction *);
/* 6.3.9 MultiMMC on a bit string (0 or 1 a byte), NIST's binary tables. */
bool estimate_predict_mmc_bits(const uint8_t *bits, uint64_t n, struct estimate_prediction *);
/* 6.3.10 LZ78Y on a bit string (0 or 1 a byte), NIST's binary tables. */
bool estimate_predict_lz78y_bits(const uint8_t *bits, uint64_t n, struct estimate_prediction *);

/*
 * The tool's scoreboard of np predictors (at most 128) over a block of len
 * (at most 64) positions: bit t of right[p] set when predictor p guessed
 * position t right, of found[p] when it guessed at all (NULL: always);
 * the guesses of the predictor leading at each position are scored into
 * r (run: the run of right ones so far).
 */
void estimate_predict_board(uint64_t *score, unsigned np, unsigned *winner,
    const uint64_t *right, const uint64_t *found, unsigned len, struct estimate_prediction *r,
    uint64_t *run);

/* The same for symbols of a larger alphabet, through dictionaries (estimate_dict.c). */
bool estimate_dict_mmc(const uint8_t *symbols, uint64_t n, unsigned k,
    struct estimate_prediction *);
struct estimate_order;
/* 6.3.9 with the string's suffixes already in order (estimate_tuple.h). */
bool estimate_dict_mmc_order(const uint8_t *symbols, uint64_t n, unsigned k,
    const struct estimate_order *, struct estimate_prediction *);
bool estimate_dict_lz78y(const uint8_t *symbols, uint64_t n, unsigned k,
    struct estimate_prediction *);

#endif
