/* lineedit.h - a small line editor for `gpurec shell` (linenoise's shape,
 * no library): one line edited in place on a terminal in raw mode, with
 * a bounded history kept in a file.
 *
 * Three layers, the first two pure so the unit tests reach them without a
 * terminal: the line buffer and its edits (gr_line), the history
 * (gr_history), and the editor that reads keys and redraws (gr_le).
 */
#ifndef GR_QUERY_LINEEDIT_H
#define GR_QUERY_LINEEDIT_H

#include <stddef.h>
#include <stdint.h>

/* ---- the line -------------------------------------------------------- */

/* The text being edited.  The cursor is a byte offset that always stands
 * at the start of a code point, never inside a UTF-8 sequence. */
struct gr_line {
	char *s;	/* the text, NUL-terminated (NULL until the first edit) */
	size_t len;	/* its bytes */
	size_t cap;	/* bytes allocated */
	size_t pos;	/* the cursor */
};

/* Inserts @n bytes at the cursor and moves the cursor past them.  Returns
 * 0 or -ENOMEM. */
int gr_line__insert(struct gr_line *l, const char *s, size_t n);
/* Replaces the text with @s, the cursor at its end.  Returns 0 or
 * -ENOMEM. */
int gr_line__set(struct gr_line *l, const char *s);
void gr_line__free(struct gr_line *l);

/* Cursor moves by one character: a code point with the zero-width ones
 * that follow it (combining accents stay with their letter). */
void gr_line__left(struct gr_line *l);
void gr_line__right(struct gr_line *l);
void gr_line__home(struct gr_line *l);
void gr_line__end(struct gr_line *l);
/* Deletes the character before the cursor (backspace) or under it. */
void gr_line__backspace(struct gr_line *l);
void gr_line__delete(struct gr_line *l);
/* Ctrl-U, Ctrl-K: deletes from the start to the cursor, or from the
 * cursor to the end.  Ctrl-W: deletes the word before the cursor and the
 * spaces after it. */
void gr_line__kill_before(struct gr_line *l);
void gr_line__kill_after(struct gr_line *l);
void gr_line__kill_word(struct gr_line *l);

/* The terminal columns code point @cp takes: 0 for combining marks and
 * zero-width characters, 2 for East Asian wide ones and emoji, else 1. */
int gr_line__cp_cols(uint32_t cp);
/* The columns @n bytes of UTF-8 at @s take (ill-formed bytes: 1 each). */
size_t gr_line__cols(const char *s, size_t n);

/* ---- history --------------------------------------------------------- */

struct gr_history {
	char **lines;	/* oldest first */
	int n;
	int max;	/* the oldest line goes when one more would pass it */
};

/* Adds @line unless it is empty or repeats the newest line; drops the
 * oldest past h->max.  Returns 0 or -ENOMEM. */
int gr_history__add(struct gr_history *h, const char *line);
/* Reads @path's lines into @h (a missing file: none).  Returns 0 or
 * -errno. */
int gr_history__load(struct gr_history *h, const char *path);
/* Writes @h to @path whole, mode 0600, through a temporary file renamed
 * over it (a crash leaves the old file or the new one).  Returns 0 or
 * -errno. */
int gr_history__save(const struct gr_history *h, const char *path);
void gr_history__free(struct gr_history *h);

/* ---- the editor ------------------------------------------------------ */

#define GR_LE_EOF 0		/* Ctrl-D on an empty line, or end of input */
#define GR_LE_LINE 1		/* a line was entered */
#define GR_LE_CANCEL 2		/* Ctrl-C: the line was dropped */

struct gr_le {
	int fd;			/* the terminal: read from, written to */
	int edit;		/* 1: raw-mode editing; 0: plain lines */
	struct gr_history hist;
	struct gr_line line;
};

/* Sets @le up on terminal @fd: editing where the terminal can (not
 * TERM=dumb), the history of @hist_max lines.  Installs the handlers that
 * give the terminal back its settings when a signal or exit() ends the
 * program during an edit.  Returns 0 or -errno. */
int gr_le__open(struct gr_le *le, int fd, int hist_max);
/* Shows @prompt and reads one line into le->line.s (without its newline;
 * valid until the next call).  Returns GR_LE_LINE, GR_LE_CANCEL, GR_LE_EOF,
 * or -errno.  The terminal is in raw mode only inside this call: a
 * statement runs with the terminal as the user left it, so Ctrl-C there
 * is SIGINT. */
int gr_le__read(struct gr_le *le, const char *prompt);
void gr_le__close(struct gr_le *le);

#endif
