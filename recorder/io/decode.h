/* decode.h - the io family's pure decoders: a block or file record in,
 * its block_io or file_io row out (recorder/row.h). */
#ifndef GR_RECORDER_IO_DECODE_H
#define GR_RECORDER_IO_DECODE_H

#include <stddef.h>
#include <linux/types.h>

#include "recorder/io/io.h"
#include "recorder/row.h"

/* Decodes one ring-buffer record into @r.  Returns its table
 * (GR_T_block_io, GR_T_file_io), or -1 for a record of another kind or
 * shorter than its struct (longer is taken: its head is the struct). */
int gr_io__decode(const struct gr_dctx *d, const void *rec, size_t len,
		  struct gr_row *r);

/* The name of an x86-64 system call file_io records, "?" for others. */
const char *gr_io__syscall_name(uint32_t nr);

#endif
