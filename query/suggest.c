/* suggest.c - "did you mean": the known name nearest a mistyped one, by
 * the optimal-string-alignment distance (Levenshtein plus swaps of two
 * neighbours: "tabels"), over names normalised so that case and the
 * '_'/'-' choice cost nothing.  Names are short (report and table names,
 * under 32 letters), so the O(len^2) table fits on the stack. */
#include <ctype.h>
#include <string.h>

#include "query/suggest.h"

#define MAXLEN 64

/* Folds case and '_' to '-' into out (MAXLEN bytes).  Returns the length,
 * or -1 if @s is too long to be a name. */
static int normalise(const char *s, char *out)
{
	size_t n = strlen(s);

	if (n >= MAXLEN)
		return -1;
	for (size_t i = 0; i < n; i++)
		out[i] = s[i] == '_' ? '-' : (char)tolower((unsigned char)s[i]);
	out[n] = 0;
	return (int)n;
}

static int min3(int a, int b, int c)
{
	return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

/* The optimal-string-alignment distance between a (la) and b (lb). */
static int distance(const char *a, int la, const char *b, int lb)
{
	int d[MAXLEN + 1][MAXLEN + 1];

	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++)
		for (int j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1,
				       d[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < d[i][j])
				d[i][j] = d[i - 2][j - 2] + 1;
		}
	return d[la][lb];
}

const char *gr_suggest(const char *word, const char *const *names, int n)
{
	char w[MAXLEN], c[MAXLEN];
	int lw = normalise(word, w), best = -1, best_d = 0;

	if (lw <= 0)
		return NULL;
	int limit = lw <= 4 ? 1 : lw / 3;
	for (int i = 0; i < n; i++) {
		int lc = normalise(names[i], c);
		if (lc < 0)
			continue;
		int dist = distance(w, lw, c, lc);
		if (dist <= limit && (best < 0 || dist < best_d)) {
			best = i;
			best_d = dist;
		}
	}
	return best < 0 ? NULL : names[best];
}
