/* fss.h - forward-secure sealing of the MANIFEST (like journald's FSS).
 *
 * `gpurec seal-setup` draws a random 32-byte seed K0 and prints it, with
 * the start time and the epoch length, as the verification key, which the
 * operator keeps offline.  The host keeps only the sealing key of the
 * current epoch, DATA/fss.key.  Each epoch's key is derived one way from
 * the last, K(e+1) = SHA-256("gpurec-fss-evolve" || K(e)), and the old one
 * is overwritten on disk, so whoever becomes root at epoch e can tag lines
 * of epoch e and later, never of an earlier one.  A verifier holding K0
 * derives the key of any epoch and checks every line's tag
 * (HMAC-SHA-256).  Hash and MAC come from the system's libcrypto
 * (store/crypto.h), so a FIPS-mode host uses its validated module.
 *
 * Epoch e covers real time [start + e*interval, start + (e+1)*interval).
 */
#ifndef GR_STORE_FSS_H
#define GR_STORE_FSS_H

#include <stdint.h>
#include <sys/types.h>

#define GR_FSS_FILE "fss.key"
#define GR_FSS_TAG_HEX 64          /* a tag: HMAC-SHA-256 as hex */
#define GR_FSS_VKEY_MAX 160        /* the verification key's text, with NUL */
#define GR_FSS_DEFAULT_INTERVAL_S (15 * 60)
/* The most epochs one evolve or one verifier tag walks forward (a hash
 * each): an epoch read from a hostile MANIFEST costs at most this.  At the
 * default interval it is centuries; at 1 s, half a year. */
#define GR_FSS_WALK_MAX (1LL << 24)

/* The sealing side: the key of one epoch, as held by the recorder. */
struct gr_fss;

/* Creates dirfd/fss.key (O_EXCL, O_NOFOLLOW, mode 0600, given to uid/gid
 * when they are not -1) holding the key of the epoch now_ns falls in, and
 * writes the verification key's text to vkey.  Refuses an existing key
 * file (-EEXIST) unless force, which replaces it.  Returns 0 or -errno. */
int gr_fss__setup(int dirfd, int64_t interval_s, int64_t now_ns, int force,
		  uid_t uid, gid_t gid, char vkey[GR_FSS_VKEY_MAX]);

/* Loads dirfd/fss.key (O_NOFOLLOW; a regular file with one link).
 * Returns 0 with *out set, -ENOENT when there is none (sealing is off),
 * or -errno / -EINVAL (malformed) with *err set to a malloc'd reason. */
int gr_fss__load(int dirfd, struct gr_fss **out, char **err);

/* As gr_fss__load, but opens the file read-only (O_RDONLY), as a verifier
 * reading evidence should; gr_fss__evolve then returns -EBADF.  (load
 * itself falls back to read-only where write access is refused.) */
int gr_fss__load_readonly(int dirfd, struct gr_fss **out, char **err);

/* The epoch whose key f holds, and the epoch real time t (ns) falls in
 * (0 for a time before the start). */
int64_t gr_fss__epoch(const struct gr_fss *f);
int64_t gr_fss__epoch_at(const struct gr_fss *f, int64_t t_ns);

/* Moves f forward to epoch to, rewriting fss.key in place and fsyncing
 * it, so the old key is gone.  A no-op returning 0 when to <= its epoch
 * (keys never move back; a clock stepped back leaves the key where it is).
 * Returns 0 or -errno (f is then unchanged): -ERANGE beyond
 * GR_FSS_WALK_MAX epochs at once, -EBADF when loaded read-only. */
int gr_fss__evolve(struct gr_fss *f, int64_t to);

/* Writes the tag of msg (n bytes) under f's current key, as 64 lowercase
 * hex digits and a NUL.  Returns 0 or -EIO (libcrypto failed). */
int gr_fss__tag(const struct gr_fss *f, const void *msg, size_t n,
		char hex[GR_FSS_TAG_HEX + 1]);

/* The setup's id (16 hex digits, the same in every epoch): a short hash
 * of the seed, so a key file can be matched to its verification key. */
const char *gr_fss__id(const struct gr_fss *f);

/* Wipes and frees f; NULL is a no-op. */
void gr_fss__free(struct gr_fss *f);

/* The verifying side: the seed, from which any epoch's key follows. */
struct gr_fss_vkey;

/* Parses a verification key's text.  Returns 0 with *out set, or -EINVAL
 * with *err set to a malloc'd reason. */
int gr_fss_vkey__parse(const char *text, struct gr_fss_vkey **out,
		       char **err);

int64_t gr_fss_vkey__epoch_at(const struct gr_fss_vkey *v, int64_t t_ns);

/* Writes the tag msg should carry in epoch e (>= 0).  Derivation walks
 * forward from the last epoch asked for, so ascending epochs cost one
 * hash each.  Returns 0, -EINVAL (e < 0), -ERANGE (more than
 * GR_FSS_WALK_MAX epochs to walk) or -EIO. */
int gr_fss_vkey__tag(struct gr_fss_vkey *v, int64_t e, const void *msg,
		     size_t n, char hex[GR_FSS_TAG_HEX + 1]);

/* Whether the key file's key is the one v derives for the key file's
 * epoch (1), or not (0): the host's key belongs to this verification key
 * and has not been moved back. */
int gr_fss_vkey__owns(struct gr_fss_vkey *v, const struct gr_fss *f);

/* The setup's id the verification key derives (as gr_fss__id). */
const char *gr_fss_vkey__id(const struct gr_fss_vkey *v);

void gr_fss_vkey__free(struct gr_fss_vkey *v);

#endif
