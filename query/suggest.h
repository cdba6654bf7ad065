/* suggest.h - "did you mean": the known name nearest a mistyped one. */
#ifndef GR_QUERY_SUGGEST_H
#define GR_QUERY_SUGGEST_H

/* Returns the name of names[0..n) nearest @word, or NULL where none is
 * near enough to be what was meant.  Names compare with case folded and
 * '_' and '-' taken as one (reports are spelt cuda-api-sum, tables
 * cuda_api: a user mixes them up), then by edit distance (insertions,
 * deletions, substitutions and swaps of two neighbours): at most 1 for a
 * word of up to 4 letters, else at most a third of its length.  Ties go
 * to the name listed first. */
const char *gr_suggest(const char *word, const char *const *names, int n);

#endif
