/* test_lineedit.c - the line editor's pure parts (query/lineedit.c): the
 * buffer's edits and cursor moves over UTF-8, terminal widths, and the
 * bounded history and its file. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query/lineedit.h"
#include "tests/unit/test.h"

/* A line holding @s with the cursor at byte @pos. */
static struct gr_line line_at(const char *s, size_t pos)
{
	struct gr_line l = { 0 };

	gr_line__set(&l, s);
	l.pos = pos;
	return l;
}

TEST(insert_at_cursor)
{
	struct gr_line l = line_at("selct", 3);

	CHECK_EQ_INT(gr_line__insert(&l, "e", 1), 0);
	CHECK_EQ_STR(l.s, "select");
	CHECK_EQ_INT(l.pos, 4);
	gr_line__end(&l);
	CHECK_EQ_INT(gr_line__insert(&l, " 1;", 3), 0);
	CHECK_EQ_STR(l.s, "select 1;");
	CHECK_EQ_INT(l.len, 9);
	gr_line__free(&l);
}

TEST(insert_grows_past_first_allocation)
{
	struct gr_line l = { 0 };
	char want[301];

	for (int i = 0; i < 300; i++) {
		CHECK_EQ_INT(gr_line__insert(&l, "x", 1), 0);
		want[i] = 'x';
	}
	want[300] = '\0';
	CHECK_EQ_STR(l.s, want);
	CHECK_EQ_INT(l.pos, 300);
	gr_line__free(&l);
}

TEST(set_empties_the_line)
{
	struct gr_line l = line_at("select 1", 8);

	CHECK_EQ_INT(gr_line__set(&l, ""), 0);
	CHECK_EQ_STR(l.s, "");
	CHECK_EQ_INT(l.len, 0);
	CHECK_EQ_INT(l.pos, 0);
	/* Typing after that: no old byte comes back past the end. */
	CHECK_EQ_INT(gr_line__insert(&l, "ab", 2), 0);
	CHECK_EQ_STR(l.s, "ab");
	gr_line__free(&l);
}

TEST(moves_by_code_point)
{
	/* "h\u00e9 \u65e5\u672c": 1 + 2 + 1 + 3 + 3 bytes */
	struct gr_line l = line_at("h\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", 10);

	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 7);
	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 4);
	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 3);
	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 1);
	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 0);
	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 0);
	gr_line__right(&l);
	gr_line__right(&l);
	CHECK_EQ_INT(l.pos, 3);
	gr_line__end(&l);
	gr_line__right(&l);
	CHECK_EQ_INT(l.pos, 10);
	gr_line__home(&l);
	CHECK_EQ_INT(l.pos, 0);
	gr_line__free(&l);
}

TEST(combining_mark_moves_with_its_letter)
{
	/* "e\u0301x": e, COMBINING ACUTE ACCENT (2 bytes), x */
	struct gr_line l = line_at("e\xcc\x81x", 3);

	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 0);
	gr_line__right(&l);
	CHECK_EQ_INT(l.pos, 3);
	gr_line__backspace(&l);
	CHECK_EQ_STR(l.s, "x");
	gr_line__free(&l);
}

TEST(ill_formed_bytes_move_one_at_a_time)
{
	/* a lone continuation byte, then a truncated 3-byte lead */
	struct gr_line l = line_at("a\x80\xe6\x97", 4);

	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 2);
	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 1);
	gr_line__left(&l);
	CHECK_EQ_INT(l.pos, 0);
	gr_line__free(&l);
}

TEST(backspace_and_delete_whole_characters)
{
	struct gr_line l = line_at("a\xe6\x97\xa5" "b", 4);

	gr_line__backspace(&l);
	CHECK_EQ_STR(l.s, "ab");
	CHECK_EQ_INT(l.pos, 1);
	gr_line__backspace(&l);
	gr_line__backspace(&l); /* at the start: nothing */
	CHECK_EQ_STR(l.s, "b");
	CHECK_EQ_INT(gr_line__set(&l, "\xc3\xa9z"), 0);
	gr_line__home(&l);
	gr_line__delete(&l);
	CHECK_EQ_STR(l.s, "z");
	CHECK_EQ_INT(l.pos, 0);
	gr_line__end(&l);
	gr_line__delete(&l); /* at the end: nothing */
	CHECK_EQ_STR(l.s, "z");
	gr_line__free(&l);
}

TEST(kills)
{
	struct gr_line l = line_at("select a from t", 9);

	gr_line__kill_after(&l);
	CHECK_EQ_STR(l.s, "select a ");
	CHECK_EQ_INT(l.len, 9);
	gr_line__kill_word(&l); /* "a " */
	CHECK_EQ_STR(l.s, "select ");
	gr_line__kill_word(&l);
	CHECK_EQ_STR(l.s, "");
	CHECK_EQ_INT(gr_line__set(&l, "one two three"), 0);
	l.pos = 8;
	gr_line__kill_before(&l);
	CHECK_EQ_STR(l.s, "three");
	CHECK_EQ_INT(l.pos, 0);
	gr_line__free(&l);
}

TEST(widths)
{
	CHECK_EQ_INT(gr_line__cp_cols('a'), 1);
	CHECK_EQ_INT(gr_line__cp_cols(0xe9), 1);	/* é */
	CHECK_EQ_INT(gr_line__cp_cols(0x0301), 0);	/* combining acute */
	CHECK_EQ_INT(gr_line__cp_cols(0x200b), 0);	/* zero width space */
	CHECK_EQ_INT(gr_line__cp_cols(0x65e5), 2);	/* 日 */
	CHECK_EQ_INT(gr_line__cp_cols(0xac00), 2);	/* 가 */
	CHECK_EQ_INT(gr_line__cp_cols(0xff21), 2);	/* fullwidth A */
	CHECK_EQ_INT(gr_line__cp_cols(0x1f680), 2);	/* rocket */
	CHECK_EQ_INT(gr_line__cp_cols(0x2500), 1);	/* box drawing */
	CHECK_EQ_INT(gr_line__cols("abc", 3), 3);
	CHECK_EQ_INT(gr_line__cols("h\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", 10),
		     7);
	CHECK_EQ_INT(gr_line__cols("e\xcc\x81", 3), 1);
	CHECK_EQ_INT(gr_line__cols("a\x80z", 3), 3);	/* bad byte: 1 */
}

TEST(history_bounded_no_repeats)
{
	struct gr_history h = { .max = 3 };

	CHECK_EQ_INT(gr_history__add(&h, "a;"), 0);
	CHECK_EQ_INT(gr_history__add(&h, "a;"), 0);
	CHECK_EQ_INT(gr_history__add(&h, ""), 0);
	CHECK_EQ_INT(h.n, 1);
	CHECK_EQ_INT(gr_history__add(&h, "b;"), 0);
	CHECK_EQ_INT(gr_history__add(&h, "c;"), 0);
	CHECK_EQ_INT(gr_history__add(&h, "d;"), 0);
	CHECK_EQ_INT(h.n, 3);
	CHECK_EQ_STR(h.lines[0], "b;");
	CHECK_EQ_STR(h.lines[2], "d;");
	gr_history__free(&h);
}

TEST(history_file_round_trip_0600)
{
	char dir[] = "/tmp/gpurec-lineedit.XXXXXX";
	char path[64];
	struct gr_history h = { .max = 2 }, back = { .max = 2 };
	struct stat sb;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/history", dir);
	CHECK_EQ_INT(gr_history__load(&back, path), 0); /* none yet */
	CHECK_EQ_INT(back.n, 0);
	gr_history__add(&h, "select 1;");
	gr_history__add(&h, ".tables");
	CHECK_EQ_INT(gr_history__save(&h, path), 0);
	CHECK_EQ_INT(stat(path, &sb), 0);
	CHECK_EQ_INT(sb.st_mode & 0777, 0600);
	CHECK_EQ_INT(gr_history__load(&back, path), 0);
	CHECK_EQ_INT(back.n, 2);
	CHECK_EQ_STR(back.lines[0], "select 1;");
	CHECK_EQ_STR(back.lines[1], ".tables");
	/* A file of more lines than the bound keeps the newest. */
	gr_history__add(&h, "select 2;");
	CHECK_EQ_INT(gr_history__save(&h, path), 0);
	gr_history__free(&back);
	back.max = 1;
	CHECK_EQ_INT(gr_history__load(&back, path), 0);
	CHECK_EQ_INT(back.n, 1);
	CHECK_EQ_STR(back.lines[0], "select 2;");
	gr_history__free(&back);
	gr_history__free(&h);
	unlink(path);
	rmdir(dir);
}

TEST_MAIN(
	TEST_ENTRY(insert_at_cursor)
	TEST_ENTRY(insert_grows_past_first_allocation)
	TEST_ENTRY(set_empties_the_line)
	TEST_ENTRY(moves_by_code_point)
	TEST_ENTRY(combining_mark_moves_with_its_letter)
	TEST_ENTRY(ill_formed_bytes_move_one_at_a_time)
	TEST_ENTRY(backspace_and_delete_whole_characters)
	TEST_ENTRY(kills)
	TEST_ENTRY(widths)
	TEST_ENTRY(history_bounded_no_repeats)
	TEST_ENTRY(history_file_round_trip_0600)
)
