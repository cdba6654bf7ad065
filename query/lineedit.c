/* lineedit.c - the line editor of `gpurec shell` (see lineedit.h).
 *
 * linenoise's design, written small for gpurec's one prompt: the terminal
 * goes to raw mode for the reading of one line and back before the line
 * is handed over, so nothing but this file ever sees it raw.  Keys are
 * read a byte at a time; escape sequences (arrows, Home, End, Delete) are
 * the VT100/xterm ones every terminal emulator in use sends.  After each
 * key the whole line is redrawn on the one row the cursor is on: "\r",
 * the prompt, the part of the text that fits, erase to the end of the
 * row, and the cursor moved to its column.  A line wider than the
 * terminal scrolls sideways to keep the cursor in view rather than
 * wrapping, so the editor never needs to know how many rows it used.
 *
 * Columns, not bytes, place the cursor: UTF-8 is decoded as gpurec's
 * output formats decode it (gr_output__utf8_next), and a small table of
 * zero-width and double-width ranges stands in for wcwidth(), which
 * depends on the locale and on the C library's Unicode version.
 *
 * The terminal's settings are restored on every way out: the normal
 * return, exit() (an atexit handler), and the signals that end a process
 * (their handlers restore, then re-raise with the default action).
 * tcsetattr() is async-signal-safe.  TCSADRAIN, not TCSAFLUSH, both ways:
 * keys typed ahead while a statement ran stay for the next line.
 */
#include "query/lineedit.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "query/output.h"

/* ---- the line -------------------------------------------------------- */

static int line__reserve(struct gr_line *l, size_t need)
{
	if (need + 1 <= l->cap)
		return 0;
	size_t cap = l->cap ? l->cap : 64;
	while (cap < need + 1)
		cap *= 2;
	char *s = realloc(l->s, cap);
	if (!s)
		return -ENOMEM;
	if (!l->s)
		s[0] = '\0';
	l->s = s;
	l->cap = cap;
	return 0;
}

int gr_line__insert(struct gr_line *l, const char *s, size_t n)
{
	if (line__reserve(l, l->len + n))
		return -ENOMEM;
	memmove(l->s + l->pos + n, l->s + l->pos, l->len - l->pos + 1);
	memcpy(l->s + l->pos, s, n);
	l->len += n;
	l->pos += n;
	return 0;
}

int gr_line__set(struct gr_line *l, const char *s)
{
	size_t n = strlen(s);

	if (line__reserve(l, n))
		return -ENOMEM;
	memcpy(l->s, s, n + 1);
	l->len = l->pos = n;
	return 0;
}

void gr_line__free(struct gr_line *l)
{
	free(l->s);
	memset(l, 0, sizeof(*l));
}

/* The code point at byte @at of @l (GR_UTF8_BAD for an ill-formed
 * sequence); returns its bytes. */
static size_t line__cp(const struct gr_line *l, size_t at, uint32_t *cp)
{
	return gr_output__utf8_next((const unsigned char *)l->s + at,
				    l->len - at, cp);
}

/* The start of the code point that ends at byte @at (> 0).  A step back
 * over continuation bytes is taken only if decoding forward from there
 * lands on @at again; otherwise the byte before @at stands alone. */
static size_t line__prev(const struct gr_line *l, size_t at)
{
	size_t p = at - 1;
	uint32_t cp;

	while (p > 0 && at - p < 4 && ((unsigned char)l->s[p] & 0xc0) == 0x80)
		p--;
	if (p + line__cp(l, p, &cp) == at)
		return p;
	return at - 1;
}

/* Whether the code point at @at is zero-width: it belongs to the
 * character before it. */
static bool line__joins(const struct gr_line *l, size_t at)
{
	uint32_t cp;

	if (at >= l->len)
		return false;
	line__cp(l, at, &cp);
	return cp != GR_UTF8_BAD && gr_line__cp_cols(cp) == 0;
}

/* The start of the character before byte @at. */
static size_t line__char_before(const struct gr_line *l, size_t at)
{
	while (at > 0) {
		at = line__prev(l, at);
		if (!line__joins(l, at))
			break;
	}
	return at;
}

/* The end of the character at byte @at. */
static size_t line__char_after(const struct gr_line *l, size_t at)
{
	uint32_t cp;

	if (at >= l->len)
		return at;
	at += line__cp(l, at, &cp);
	while (line__joins(l, at))
		at += line__cp(l, at, &cp);
	return at;
}

/* Removes bytes [@from, @to) and puts the cursor at @from. */
static void line__cut(struct gr_line *l, size_t from, size_t to)
{
	if (to <= from)
		return;
	memmove(l->s + from, l->s + to, l->len - to + 1);
	l->len -= to - from;
	l->pos = from;
}

void gr_line__left(struct gr_line *l)
{
	l->pos = line__char_before(l, l->pos);
}

void gr_line__right(struct gr_line *l)
{
	l->pos = line__char_after(l, l->pos);
}

void gr_line__home(struct gr_line *l)
{
	l->pos = 0;
}

void gr_line__end(struct gr_line *l)
{
	l->pos = l->len;
}

void gr_line__backspace(struct gr_line *l)
{
	line__cut(l, line__char_before(l, l->pos), l->pos);
}

void gr_line__delete(struct gr_line *l)
{
	line__cut(l, l->pos, line__char_after(l, l->pos));
}

void gr_line__kill_before(struct gr_line *l)
{
	line__cut(l, 0, l->pos);
}

void gr_line__kill_after(struct gr_line *l)
{
	if (l->s) {
		l->s[l->pos] = '\0';
		l->len = l->pos;
	}
}

void gr_line__kill_word(struct gr_line *l)
{
	size_t at = l->pos;

	while (at > 0 && l->s[at - 1] == ' ')
		at--;
	while (at > 0 && l->s[at - 1] != ' ')
		at--;
	line__cut(l, at, l->pos);
}

/* Ranges of code points, inclusive, sorted. */
struct cp_range {
	uint32_t lo, hi;
};

/* Combining marks and zero-width characters: drawn on the character
 * before them. */
static const struct cp_range zero_width[] = {
	{ 0x0300, 0x036f }, { 0x0483, 0x0489 }, { 0x0591, 0x05bd },
	{ 0x0610, 0x061a }, { 0x064b, 0x065f }, { 0x0e31, 0x0e31 },
	{ 0x0e34, 0x0e3a }, { 0x0e47, 0x0e4e }, { 0x1ab0, 0x1aff },
	{ 0x1dc0, 0x1dff }, { 0x200b, 0x200f }, { 0x2028, 0x202e },
	{ 0x2060, 0x2064 }, { 0x20d0, 0x20ff }, { 0xfe00, 0xfe0f },
	{ 0xfe20, 0xfe2f }, { 0xfeff, 0xfeff }, { 0xe0100, 0xe01ef },
};

/* East Asian Wide and Fullwidth (UAX #11), and the emoji blocks that
 * terminals draw two columns wide. */
static const struct cp_range double_width[] = {
	{ 0x1100, 0x115f }, { 0x231a, 0x231b }, { 0x2329, 0x232a },
	{ 0x23e9, 0x23ec }, { 0x23f0, 0x23f0 }, { 0x23f3, 0x23f3 },
	{ 0x25fd, 0x25fe }, { 0x2614, 0x2615 }, { 0x2648, 0x2653 },
	{ 0x267f, 0x267f }, { 0x2693, 0x2693 }, { 0x26a1, 0x26a1 },
	{ 0x26aa, 0x26ab }, { 0x26bd, 0x26be }, { 0x26c4, 0x26c5 },
	{ 0x26ce, 0x26ce }, { 0x26d4, 0x26d4 }, { 0x26ea, 0x26ea },
	{ 0x26f2, 0x26f3 }, { 0x26f5, 0x26f5 }, { 0x26fa, 0x26fa },
	{ 0x26fd, 0x26fd }, { 0x2705, 0x2705 }, { 0x270a, 0x270b },
	{ 0x2728, 0x2728 }, { 0x274c, 0x274c }, { 0x274e, 0x274e },
	{ 0x2753, 0x2755 }, { 0x2757, 0x2757 }, { 0x2795, 0x2797 },
	{ 0x27b0, 0x27b0 }, { 0x27bf, 0x27bf }, { 0x2b1b, 0x2b1c },
	{ 0x2b50, 0x2b50 }, { 0x2b55, 0x2b55 }, { 0x2e80, 0x303e },
	{ 0x3041, 0x33ff }, { 0x3400, 0x4dbf }, { 0x4e00, 0x9fff },
	{ 0xa000, 0xa4cf }, { 0xa960, 0xa97f }, { 0xac00, 0xd7a3 },
	{ 0xf900, 0xfaff }, { 0xfe10, 0xfe19 }, { 0xfe30, 0xfe6f },
	{ 0xff00, 0xff60 }, { 0xffe0, 0xffe6 }, { 0x16fe0, 0x16fe4 },
	{ 0x17000, 0x18cff }, { 0x1b000, 0x1b2ff }, { 0x1f004, 0x1f004 },
	{ 0x1f0cf, 0x1f0cf }, { 0x1f18e, 0x1f18e }, { 0x1f191, 0x1f19a },
	{ 0x1f200, 0x1f251 }, { 0x1f300, 0x1f64f }, { 0x1f680, 0x1f6ff },
	{ 0x1f7e0, 0x1f7eb }, { 0x1f90c, 0x1f9ff }, { 0x1fa70, 0x1faff },
	{ 0x20000, 0x2fffd }, { 0x30000, 0x3fffd },
};

static bool in_ranges(uint32_t cp, const struct cp_range *r, size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < r[mid].lo)
			hi = mid;
		else if (cp > r[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

int gr_line__cp_cols(uint32_t cp)
{
	if (in_ranges(cp, zero_width, sizeof(zero_width) /
		      sizeof(*zero_width)))
		return 0;
	if (in_ranges(cp, double_width, sizeof(double_width) /
		      sizeof(*double_width)))
		return 2;
	return 1;
}

size_t gr_line__cols(const char *s, size_t n)
{
	size_t cols = 0;

	while (n > 0) {
		uint32_t cp;
		size_t k = gr_output__utf8_next((const unsigned char *)s, n,
						&cp);

		cols += cp == GR_UTF8_BAD ? 1 : (size_t)gr_line__cp_cols(cp);
		s += k;
		n -= k;
	}
	return cols;
}

/* ---- history --------------------------------------------------------- */

int gr_history__add(struct gr_history *h, const char *line)
{
	if (!*line || (h->n && strcmp(h->lines[h->n - 1], line) == 0))
		return 0;
	char *copy = strdup(line);
	if (!copy)
		return -ENOMEM;
	if (h->n >= h->max) {
		free(h->lines[0]);
		memmove(h->lines, h->lines + 1, (size_t)(h->n - 1) *
			sizeof(*h->lines));
		h->n--;
	} else if (!h->lines) {
		h->lines = calloc((size_t)h->max, sizeof(*h->lines));
		if (!h->lines) {
			free(copy);
			return -ENOMEM;
		}
	}
	h->lines[h->n++] = copy;
	return 0;
}

int gr_history__load(struct gr_history *h, const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (rc == 0 && (n = getline(&buf, &cap, f)) > 0) {
		buf[strcspn(buf, "\r\n")] = '\0';
		rc = gr_history__add(h, buf);
	}
	if (rc == 0 && ferror(f))
		rc = -EIO;
	free(buf);
	fclose(f);
	return rc;
}

int gr_history__save(const struct gr_history *h, const char *path)
{
	size_t len = strlen(path);
	char *tmp = malloc(len + 8);
	int rc = 0;

	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".XXXXXX", 8);
	int fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
	}
	for (int i = 0; f && i < h->n; i++)
		fprintf(f, "%s\n", h->lines[i]);
	if (f && (ferror(f) | fclose(f)))
		rc = -EIO;
	if (rc == 0 && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

void gr_history__free(struct gr_history *h)
{
	for (int i = 0; i < h->n; i++)
		free(h->lines[i]);
	free(h->lines);
	h->lines = NULL;
	h->n = 0;
}

/* ---- the terminal ---------------------------------------------------- */

/* What the handlers need: one editor per process. */
static struct {
	int fd;
	struct termios saved;		/* the settings to give back */
	struct termios raw_mode;	/* the settings while editing */
	volatile sig_atomic_t raw;	/* the terminal is raw now */
	bool hooked;			/* atexit and handlers installed */
} tty = { .fd = -1 };

/* The signals whose default action ends the process.  Not SIGINT: the
 * shell owns it (it interrupts a statement), and in raw mode the keyboard
 * cannot send it (ISIG is off). */
static const int fatal_signals[] = {
	SIGHUP, SIGQUIT, SIGTERM, SIGPIPE, SIGABRT, SIGSEGV, SIGBUS, SIGFPE,
	SIGILL, SIGXCPU, SIGXFSZ,
};
static struct sigaction old_actions[sizeof(fatal_signals) /
				    sizeof(*fatal_signals)];

static void tty__restore(void)
{
	if (tty.raw) {
		tcsetattr(tty.fd, TCSADRAIN, &tty.saved);
		tty.raw = 0;
	}
}

/* A signal during an edit: the terminal back, then the action the
 * program had for it: its own handler (ASan's for SIGSEGV, say), after
 * which the edit goes on in raw mode, or the default, which ends the
 * process as if we had not been here (the signal, raised again, is
 * delivered when this handler returns). */
static void tty__on_signal(int sig, siginfo_t *info, void *uc)
{
	int saved_errno = errno;
	bool was_raw = tty.raw;

	tty__restore();
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(*fatal_signals);
	     i++) {
		const struct sigaction *old = &old_actions[i];

		if (fatal_signals[i] != sig)
			continue;
		if (old->sa_flags & SA_SIGINFO) {
			old->sa_sigaction(sig, info, uc);
		} else if (old->sa_handler == SIG_DFL) {
			signal(sig, SIG_DFL);
			raise(sig);
			errno = saved_errno;
			return;
		} else if (old->sa_handler != SIG_IGN) {
			old->sa_handler(sig);
		}
		break;
	}
	if (was_raw && tcsetattr(tty.fd, TCSADRAIN, &tty.raw_mode) == 0)
		tty.raw = 1;
	errno = saved_errno;
}

static int tty__raw(void)
{
	struct termios raw;

	if (tcgetattr(tty.fd, &tty.saved) < 0)
		return -errno;
	raw = tty.saved;
	/* As cfmakeraw(), but output processing stays on: "\n" is still
	 * "\r\n" for whatever is printed while the line is edited. */
	raw.c_iflag &= ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR |
			 ICRNL | IXON);
	raw.c_lflag &= ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
	raw.c_cflag &= ~(CSIZE | PARENB);
	raw.c_cflag |= CS8;
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tty.raw_mode = raw;
	tty.raw = 1;
	if (tcsetattr(tty.fd, TCSADRAIN, &raw) < 0) {
		tty.raw = 0;
		return -errno;
	}
	return 0;
}

static void tty__hook(void)
{
	struct sigaction sa;

	if (tty.hooked)
		return;
	tty.hooked = true;
	atexit(tty__restore);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = tty__on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(*fatal_signals);
	     i++)
		sigaction(fatal_signals[i], &sa, &old_actions[i]);
}

static void tty__unhook(void)
{
	if (!tty.hooked)
		return;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(*fatal_signals);
	     i++)
		sigaction(fatal_signals[i], &old_actions[i], NULL);
	tty.hooked = false;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, s, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -EIO;
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Reads one byte.  Returns 1, 0 at end of input, or -errno. */
static int read_byte(int fd, unsigned char *c)
{
	for (;;) {
		ssize_t k = read(fd, c, 1);

		if (k >= 0)
			return (int)k;
		if (errno != EINTR)
			return -errno;
	}
}

static int term_cols(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Redraws the prompt and the line on the cursor's row.  The text shown
 * starts at @from: the first character that keeps the cursor within the
 * row; it ends where the row does (the last column stays empty, so
 * nothing wraps). */
static int refresh(struct gr_le *le, const char *prompt)
{
	const struct gr_line *l = &le->line;
	const char *s = l->s ? l->s : "";
	size_t cols = (size_t)term_cols(le->fd);
	size_t pcols = gr_line__cols(prompt, strlen(prompt));
	size_t room = cols > pcols + 1 ? cols - pcols - 1 : 1;
	size_t from = 0, to = l->len;

	while (from < l->pos && gr_line__cols(s + from, l->pos - from) > room)
		from = line__char_after(l, from);
	while (to > l->pos && gr_line__cols(s + from, to - from) > room)
		to = line__char_before(l, to);

	size_t ccol = pcols + gr_line__cols(s + from, l->pos - from);
	size_t need = strlen(prompt) + (to - from) + 32;
	char *out = malloc(need);
	if (!out)
		return -ENOMEM;
	int n = snprintf(out, need, "\r%s%.*s\x1b[0K\r", prompt,
			 (int)(to - from), s + from);
	if (ccol > 0)
		n += snprintf(out + n, need - (size_t)n, "\x1b[%zuC", ccol);
	int rc = write_all(le->fd, out, (size_t)n);
	free(out);
	return rc;
}

/* ---- the editor ------------------------------------------------------ */

int gr_le__open(struct gr_le *le, int fd, int hist_max)
{
	const char *term = getenv("TERM");

	memset(le, 0, sizeof(*le));
	le->fd = fd;
	le->hist.max = hist_max > 0 ? hist_max : 1;
	le->edit = isatty(fd) && !(term && (!strcmp(term, "dumb") ||
					    !strcmp(term, "cons25") ||
					    !strcmp(term, "emacs")));
	if (le->edit) {
		tty.fd = fd;
		tty__hook();
	}
	return 0;
}

void gr_le__close(struct gr_le *le)
{
	tty__restore();
	if (le->edit)
		tty__unhook();
	gr_history__free(&le->hist);
	gr_line__free(&le->line);
}

/* Reads a line without editing (a dumb terminal): the prompt, then
 * bytes up to a newline. */
static int read_plain(struct gr_le *le, const char *prompt)
{
	unsigned char c;
	int rc;

	if (write_all(le->fd, prompt, strlen(prompt)))
		return -EIO;
	if (gr_line__set(&le->line, ""))
		return -ENOMEM;
	while ((rc = read_byte(le->fd, &c)) == 1 && c != '\n')
		if (gr_line__insert(&le->line, (const char *)&c, 1))
			return -ENOMEM;
	if (rc < 0)
		return rc;
	if (rc == 0 && le->line.len == 0) {
		/* Ctrl-D: what comes next starts below the prompt. */
		if (write_all(le->fd, "\n", 1))
			return -EIO;
		return GR_LE_EOF;
	}
	return GR_LE_LINE;
}

/* The key after an ESC: the final byte of a CSI or SS3 sequence, "~"
 * sequences as the digit before it ('1' Home ... '8' End), or 0 for one
 * the editor does not use. */
static int read_escape(int fd)
{
	unsigned char a, b, c;

	if (read_byte(fd, &a) != 1 || read_byte(fd, &b) != 1)
		return 0;
	if (a == 'O')
		return b == 'H' || b == 'F' ? b : 0;
	if (a != '[')
		return 0;
	if (b >= '0' && b <= '9') {
		/* "\x1b[3~"; "\x1b[1;5C" (Ctrl-arrow) ends on its letter */
		do {
			if (read_byte(fd, &c) != 1)
				return 0;
		} while ((c >= '0' && c <= '9') || c == ';');
		if (c == '~')
			return b;
		return c >= 'A' && c <= 'D' ? c : 0;
	}
	return b;
}

/* History browsing: @at is the index of the line shown, hist.n the line
 * being typed, kept in @draft while older ones are shown. */
static int history_step(struct gr_le *le, int *at, char **draft, int dir)
{
	int to = *at + dir;

	if (to < 0 || to > le->hist.n)
		return 0;
	if (*at == le->hist.n) {
		free(*draft);
		*draft = strdup(le->line.s ? le->line.s : "");
		if (!*draft)
			return -ENOMEM;
	}
	*at = to;
	return gr_line__set(&le->line, to == le->hist.n ? *draft :
			    le->hist.lines[to]);
}

/* The keys, with the line in raw mode.  Returns as gr_le__read. */
static int edit(struct gr_le *le, const char *prompt)
{
	struct gr_line *l = &le->line;
	int at = le->hist.n;
	char *draft = NULL;
	int rc;

	if ((rc = gr_line__set(l, "")) || (rc = refresh(le, prompt)))
		return rc;
	for (;;) {
		unsigned char c;

		rc = read_byte(le->fd, &c);
		if (rc <= 0) {
			rc = rc == 0 ? GR_LE_EOF : rc;
			break;
		}
		switch (c) {
		case '\r':
		case '\n':
			gr_line__end(l);
			rc = refresh(le, prompt);
			rc = rc ? rc : GR_LE_LINE;
			goto out;
		case 3: /* Ctrl-C */
			rc = write_all(le->fd, "^C", 2);
			rc = rc ? rc : GR_LE_CANCEL;
			goto out;
		case 4: /* Ctrl-D */
			if (l->len == 0) {
				rc = GR_LE_EOF;
				goto out;
			}
			gr_line__delete(l);
			break;
		case 1: gr_line__home(l); break;
		case 5: gr_line__end(l); break;
		case 2: gr_line__left(l); break;
		case 6: gr_line__right(l); break;
		case 8:
		case 127: gr_line__backspace(l); break;
		case 11: gr_line__kill_after(l); break;
		case 21: gr_line__kill_before(l); break;
		case 23: gr_line__kill_word(l); break;
		case 12: /* Ctrl-L: clear the screen */
			rc = write_all(le->fd, "\x1b[H\x1b[2J", 7);
			break;
		case 16: rc = history_step(le, &at, &draft, -1); break;
		case 14: rc = history_step(le, &at, &draft, 1); break;
		case 27:
			switch (read_escape(le->fd)) {
			case 'A': rc = history_step(le, &at, &draft, -1); break;
			case 'B': rc = history_step(le, &at, &draft, 1); break;
			case 'C': gr_line__right(l); break;
			case 'D': gr_line__left(l); break;
			case 'H': case '1': case '7': gr_line__home(l); break;
			case 'F': case '4': case '8': gr_line__end(l); break;
			case '3': gr_line__delete(l); break;
			}
			break;
		default: {
			/* A printable character: the whole UTF-8 sequence its
			 * lead byte announces, so the line never holds half
			 * of one on screen.  Other control bytes (Tab too)
			 * are dropped. */
			char seq[4] = { (char)c };
			size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 :
				   c >= 0xc0 ? 2 : 1;

			if (c < 0x20)
				break;
			for (size_t i = 1; i < n; i++)
				if (read_byte(le->fd, (unsigned char *)&seq[i])
				    != 1)
					n = i;
			rc = gr_line__insert(l, seq, n);
		}
		}
		if (rc < 0)
			break;
		if ((rc = refresh(le, prompt)))
			break;
	}
out:
	free(draft);
	return rc;
}

int gr_le__read(struct gr_le *le, const char *prompt)
{
	int rc;

	if (!le->edit)
		return read_plain(le, prompt);
	if ((rc = tty__raw()))
		return rc;
	rc = edit(le, prompt);
	/* The line stays on screen: the next output starts below it. */
	int wrc = write_all(le->fd, "\r\n", 2);
	tty__restore();
	return rc < 0 ? rc : wrc ? wrc : rc;
}
