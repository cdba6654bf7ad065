/* test_elfsyms.c - ELF function symbols, offsets, symbolizing, build ids
 * and demangling (recorder/sym/elfsyms.c), and kernel names read from
 * nvcc's registration code in stripped files (recorder/sym/stubreg.c).
 *
 * Every expected offset and address is computed independently of libelf:
 * by parsing `readelf -Ws` (symbols) and `readelf -lW` (PT_LOAD headers)
 * and applying off = st_value - p_vaddr + p_offset by hand.  Test programs
 * are built once per run into a mkdtemp directory under /tmp with gcc (and
 * nvcc, when /usr/local/cuda/bin/nvcc exists); the -no-pie build makes
 * vaddr and file offset differ, so a missing conversion shows.
 * libcudart.so.13 must exist unless GR_NO_CUDA=1.
 */
#include "tests/unit/test.h"
#include "recorder/sym/elfsyms.h"
#include "recorder/sym/stubreg.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CUDART "/usr/local/cuda/lib64/libcudart.so.13"
#define NVCC "/usr/local/cuda/bin/nvcc"
#define MAXREF 16

/* ---- independent reference: readelf ------------------------------------ */

struct ref_sym {
	uint64_t value, size;
	char bind[32];
	int dynsym;		/* listed in .dynsym */
};

struct ref_seg {
	uint64_t off, vaddr, filesz;
};

/* Runs a shell command built from fmt; returns its exit status, or -1. */
static int __attribute__((format(printf, 1, 2))) shf(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc == -1 || !WIFEXITED(rc))
		return -1;
	return WEXITSTATUS(rc);
}

/* Fills r with the defined FUNC/IFUNC entries of path whose name, less any
 * @VERSION, is name, from every symbol table.  Returns how many, or -1. */
static int ref_syms(const char *path, const char *name, struct ref_sym *r,
		    int max)
{
	char cmd[1024], *line = NULL;
	size_t cap = 0;
	int n = 0, dyn = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -Ws '%s' 2>/dev/null", path);
	if (!(f = popen(cmd, "r")))
		return -1;
	while (getline(&line, &cap, f) > 0) {
		char size[32], type[32], bind[32], vis[32], ndx[32], sym[2048];
		unsigned long long val;

		if (strstr(line, "Symbol table '"))
			dyn = strstr(line, "'.dynsym'") != NULL;
		if (sscanf(line, " %*u: %llx %31s %31s %31s %31s %31s %2047s",
			   &val, size, type, bind, vis, ndx, sym) != 7)
			continue;
		if ((strcmp(type, "FUNC") && strcmp(type, "IFUNC")) ||
		    !strcmp(ndx, "UND") || !val)
			continue;
		char *at = strchr(sym, '@');
		if (at)
			*at = '\0';
		if (strcmp(sym, name) || n >= max)
			continue;
		r[n].value = val;
		r[n].size = strtoull(size, NULL, 0);
		snprintf(r[n].bind, sizeof(r[n].bind), "%s", bind);
		r[n].dynsym = dyn;
		n++;
	}
	free(line);
	return pclose(f) == 0 ? n : -1;
}

/* Fills s with path's PT_LOAD headers.  Returns how many, or -1. */
static int ref_segs(const char *path, struct ref_seg *s, int max)
{
	char cmd[1024], *line = NULL;
	size_t cap = 0;
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	if (!(f = popen(cmd, "r")))
		return -1;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long off, va, pa, fsz;

		if (n < max && sscanf(line, " LOAD %llx %llx %llx %llx",
				      &off, &va, &pa, &fsz) == 4)
			s[n++] = (struct ref_seg){ off, va, fsz };
	}
	free(line);
	return pclose(f) == 0 ? n : -1;
}

/* Returns the file offset of vaddr by the reference headers, or
 * UINT64_MAX. */
static uint64_t ref_off(const char *path, uint64_t vaddr)
{
	struct ref_seg s[MAXREF];
	int n = ref_segs(path, s, MAXREF);

	for (int i = 0; i < n; i++)
		if (vaddr >= s[i].vaddr && vaddr < s[i].vaddr + s[i].filesz)
			return vaddr - s[i].vaddr + s[i].off;
	return UINT64_MAX;
}

/* Copies the "Build ID:" of path into buf.  Returns 0, or -1 if none. */
static int ref_build_id(const char *path, char *buf, size_t len)
{
	char cmd[1024], *line = NULL;
	size_t cap = 0;
	int rc = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	if (!(f = popen(cmd, "r")))
		return -1;
	while (getline(&line, &cap, f) > 0) {
		char id[256];

		if (rc && sscanf(line, " Build ID: %255s", id) == 1) {
			snprintf(buf, len, "%s", id);
			rc = 0;
		}
	}
	free(line);
	pclose(f);
	return rc;
}

/* Returns how many distinct (address, binding) defined functions readelf
 * lists in path's .dynsym (for files that have no .symtab), or -1. */
static int ref_dynsym_funcs(const char *path)
{
	char cmd[1024];
	int n = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "readelf -W --dyn-syms '%s' | awk '($4 == \"FUNC\" || "
		 "$4 == \"IFUNC\") && $7 != \"UND\" && $2 !~ /^0+$/ "
		 "{ r = $5 == \"WEAK\" ? 1 : ($5 == \"GLOBAL\" || "
		 "$5 == \"UNIQUE\") ? 0 : 2; print $2, r }' | sort -u | wc -l",
		 path);
	if (!(f = popen(cmd, "r")))
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	pclose(f);
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* gr_elf__symbolize's name copied to a static buffer (freed), for
 * CHECK_EQ_STR. */
static const char *symb(const struct gr_elf *e, uint64_t va, uint64_t *in)
{
	static char buf[4096];
	char *n = gr_elf__symbolize(e, va, in);

	if (!n)
		return NULL;
	snprintf(buf, sizeof(buf), "%s", n);
	free(n);
	return buf;
}

/* gr_elf__find on path opened to find name alone; -1 if it cannot be
 * opened. */
static int find1(const char *path, const char *name, uint64_t *offs, int max)
{
	struct gr_elf *f = gr_elf__open_find(path, &name, 1);
	int n;

	if (!f)
		return -1;
	n = gr_elf__find(f, name, offs, max);
	gr_elf__close(f);
	return n;
}

/* ---- test programs, built once ------------------------------------------ */

static char tmp[64];

static void rm_tmp(void)
{
	if (tmp[0])
		shf("rm -rf '%s'", tmp);
}

/* Returns the scratch directory, creating it on first use. */
static const char *tmpdir(void)
{
	if (!tmp[0]) {
		snprintf(tmp, sizeof(tmp), "/tmp/gr_elfsyms.XXXXXX");
		if (!mkdtemp(tmp)) {
			fprintf(stderr, "test_elfsyms.c: mkdtemp: %s\n",
				strerror(errno));
			tmp[0] = '\0';
			return NULL;
		}
		atexit(rm_tmp);
	}
	return tmp;
}

/* Writes text to dir/name.  Returns 0, or -1. */
static int write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

/* Two TUs, each with a local function "helper"; one global function; a
 * size-0 local function from asm; a global variable. */
static const char a_c[] =
	"int global_counter;\n"
	"static __attribute__((noinline)) int helper(int x)\n"
	"{ return x * 3 + global_counter; }\n"
	"int other_helper(int);\n"
	"int gr_global_fn(int x) { return helper(x) + 1; }\n"
	"__asm__(\".text\\n.type zfunc,@function\\nzfunc:\\n"
	"\\tnop\\n\\tnop\\n\\tnop\\n\\tret\\n\");\n"
	"int main(int argc, char **argv)\n"
	"{ (void)argv; return gr_global_fn(argc) + other_helper(argc); }\n";
static const char b_c[] =
	"static __attribute__((noinline)) int helper(int x)\n"
	"{ return x * 5; }\n"
	"int other_helper(int x) { return helper(x); }\n";
static const char v_c[] =
	"int vfunc_v1(void) { return 1; }\n"
	"int vfunc_v2(void) { return 2; }\n"
	"__asm__(\".symver vfunc_v1, vfunc@V1\");\n"
	"__asm__(\".symver vfunc_v2, vfunc@@V2\");\n";
static const char v_map[] =
	"V1 { global: vfunc; local: *; };\nV2 { global: vfunc; } V1;\n";

/* Builds dir/pie, dir/nopie, dir/a.o, dir/libv.so and dir/libv_nodyn.so
 * (.symtab only: names there are spelled vfunc@V1).  Returns 0, or -1. */
static int build_c(void)
{
	static int state;	/* 0 not yet, 1 built, -1 failed */
	const char *d = tmpdir();

	if (state)
		return state > 0 ? 0 : -1;
	state = -1;
	if (!d || write_file(d, "a.c", a_c) || write_file(d, "b.c", b_c) ||
	    write_file(d, "v.c", v_c) || write_file(d, "v.map", v_map))
		return -1;
	if (shf("cd '%s' && gcc -O0 -g -o pie a.c b.c && "
		"gcc -O0 -g -no-pie -o nopie a.c b.c && "
		"gcc -O0 -c -o a.o a.c && "
		"gcc -O0 -shared -fPIC -Wl,--version-script=v.map "
		"-o libv.so v.c && "
		"objcopy --remove-section=.dynsym libv.so libv_nodyn.so", d)) {
		fprintf(stderr, "test_elfsyms.c: gcc failed in %s\n", d);
		return -1;
	}
	state = 1;
	return 0;
}

static const char k_cu[] =
	"#include <cstdio>\n"
	"__device__ float gr_bias;\n"
	"__global__ void saxpy(float *y, const float *x, float a, int n)\n"
	"{\n"
	"	int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"	if (i < n)\n"
	"		y[i] = a * x[i] + y[i] + gr_bias;\n"
	"}\n"
	"namespace gr {\n"
	"template <typename T> __global__ void scale(T *p, T f, int n)\n"
	"{\n"
	"	int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"	if (i < n)\n"
	"		p[i] *= f;\n"
	"}\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	saxpy<<<1, 1>>>(0, 0, 2.0f, 0);\n"
	"	gr::scale<double><<<1, 1>>>(0, 2.0, 0);\n"
	"	printf(\"%d\\n\", (int)cudaDeviceSynchronize());\n"
	"	return 0;\n"
	"}\n";

/* Builds dir/k with nvcc's defaults (static cudart).  Returns 0, or -1. */
static int build_cu(void)
{
	static int state;
	const char *d = tmpdir();

	if (state)
		return state > 0 ? 0 : -1;
	state = -1;
	if (!d || write_file(d, "k.cu", k_cu))
		return -1;
	/* k: nvcc's defaults; libk.so: optimized, PIC, hidden symbols (as
	 * PyTorch builds); *_strip: no .symtab. */
	if (shf("cd '%s' && " NVCC " -o k k.cu && strip -o k_strip k && "
		NVCC " -Xcompiler -O2,-fPIC,-fvisibility=hidden -shared "
		"-o libk.so k.cu && strip -o libk_strip.so libk.so", d)) {
		fprintf(stderr, "test_elfsyms.c: nvcc failed in %s\n", d);
		return -1;
	}
	state = 1;
	return 0;
}

/* Returns whether the CUDA tests should be skipped (printing "skip" and
 * marking the test skipped). */
static int no_cuda(const char *what)
{
	const char *v = getenv("GR_NO_CUDA");

	if (access(what, F_OK) == 0)
		return 0;
	if (v && !strcmp(v, "1")) {
		printf("skip: %s missing (GR_NO_CUDA=1)\n", what);
		gr_test_skipped_ = 1;
		return 1;
	}
	fprintf(stderr, "test_elfsyms.c: %s missing; set GR_NO_CUDA=1 to "
		"skip the CUDA tests\n", what);
	return 0;
}

/* ---- tests -------------------------------------------------------------- */

TEST(cudart_find)
{
	static const char *const names[] = {
		"cudaLaunchKernel", "cudaMemcpy", "__cudaRegisterFunction",
	};
	struct gr_elf *e;
	char id[256];

	if (no_cuda(CUDART))
		return;
	CHECK(access(CUDART, R_OK) == 0);
	CHECK((e = gr_elf__open(CUDART)) != NULL);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct ref_sym r[MAXREF];
		uint64_t offs[4] = { 0 }, va = 0, in = 99;

		CHECK_EQ_INT(ref_syms(CUDART, names[i], r, MAXREF), 1);
		CHECK(r[0].dynsym);
		CHECK_EQ_INT(find1(CUDART, names[i], offs, 4), 1);
		CHECK(offs[0] != UINT64_MAX);
		CHECK_EQ_INT(offs[0], ref_off(CUDART, r[0].value));
		CHECK_EQ_INT(gr_elf__off_to_vaddr(e, offs[0], &va), 0);
		CHECK_EQ_INT(va, r[0].value);
		CHECK(r[0].size > 10);
		CHECK_EQ_STR(symb(e, r[0].value + 10, &in),
			     names[i]);
		CHECK_EQ_INT(in, 10);
	}
	/* Prefixes and longer names are other functions. */
	uint64_t off;
	CHECK_EQ_INT(find1(CUDART, "cudaMemcp", &off, 1), 0);
	CHECK_EQ_INT(find1(CUDART, "cudaMemcpyX", &off, 1), 0);
	CHECK_EQ_INT(find1(CUDART, "", &off, 1), 0);
	CHECK_EQ_INT(find1(CUDART, "cudaMemcpy", &off, 0), 0);
	static const char *const some[] = { "nope", "cudaMemcpy" };
	struct gr_elf *f = gr_elf__open_find(CUDART, some, 2);
	CHECK(f != NULL);
	CHECK_EQ_INT(gr_elf__has_any(f, some, 2), 1);
	CHECK_EQ_INT(gr_elf__has_any(f, some, 1), 0);
	CHECK_EQ_INT(gr_elf__nfuncs(f), 0);
	gr_elf__close(f);
	CHECK_EQ_INT(gr_elf__nfuncs(e), ref_dynsym_funcs(CUDART));
	CHECK(gr_elf__nfuncs(e) > 300);
	CHECK_EQ_INT(ref_build_id(CUDART, id, sizeof(id)), 0);
	CHECK_EQ_STR(gr_elf__build_id(e), id);
	gr_elf__close(e);
}

/* Checks the gcc-built executable at dir/name. */
static void check_c_exe(const char *name, int nopie)
{
	char path[256], id[256];
	struct ref_sym r[MAXREF], g[MAXREF], z[MAXREF], v[MAXREF];
	uint64_t offs[4] = { 0 }, exp[2], va = 0, in = 99;
	struct gr_elf *e;

	CHECK_EQ_INT(build_c(), 0);
	snprintf(path, sizeof(path), "%s/%s", tmpdir(), name);
	CHECK((e = gr_elf__open(path)) != NULL);

	/* Two local functions named helper: both, in address order. */
	CHECK_EQ_INT(ref_syms(path, "helper", r, MAXREF), 2);
	CHECK_EQ_STR(r[0].bind, "LOCAL");
	CHECK_EQ_STR(r[1].bind, "LOCAL");
	exp[0] = ref_off(path, r[0].value);
	exp[1] = ref_off(path, r[1].value);
	qsort(exp, 2, sizeof(exp[0]), cmp_u64);
	CHECK_EQ_INT(find1(path, "helper", offs, 4), 2);
	CHECK_EQ_INT(offs[0], exp[0]);
	CHECK_EQ_INT(offs[1], exp[1]);
	CHECK_EQ_INT(find1(path, "helper", offs, 1), 1);
	CHECK_EQ_INT(offs[0], exp[0]);
	static const char *const names[] = { "nothing", "helper" };
	struct gr_elf *fe = gr_elf__open_find(path, names, 2);
	CHECK(fe != NULL);
	CHECK_EQ_INT(gr_elf__has_any(fe, names, 2), 1);
	CHECK_EQ_INT(gr_elf__has_any(fe, names, 1), 0);
	gr_elf__close(fe);
	/* An import is no function of the file, but is told apart. */
	static const char *const imp[] = { "__libc_start_main", "main",
					   "nothing" };
	CHECK((fe = gr_elf__open_find(path, imp, 3)) != NULL);
	CHECK_EQ_INT(gr_elf__imports(fe, "__libc_start_main"), 1);
	CHECK_EQ_INT(gr_elf__find(fe, "__libc_start_main", offs, 4), 0);
	CHECK_EQ_INT(gr_elf__imports(fe, "main"), 0);
	CHECK_EQ_INT(gr_elf__find(fe, "main", offs, 4), 1);
	CHECK_EQ_INT(gr_elf__imports(fe, "nothing"), 0);
	gr_elf__close(fe);

	/* Symbolize inside helper, and round-trip its offset. */
	CHECK(r[0].size > 3);
	CHECK_EQ_STR(symb(e, r[0].value + 3, &in), "helper");
	CHECK_EQ_INT(in, 3);
	CHECK_EQ_STR(symb(e, r[0].value + r[0].size - 1, &in),
		     "helper");
	CHECK_EQ_INT(in, r[0].size - 1);
	CHECK_EQ_INT(gr_elf__off_to_vaddr(e, ref_off(path, r[0].value), &va),
		     0);
	CHECK_EQ_INT(va, r[0].value);

	/* The global one. */
	CHECK_EQ_INT(ref_syms(path, "gr_global_fn", g, MAXREF), 1);
	CHECK_EQ_INT(find1(path, "gr_global_fn", offs, 4), 1);
	CHECK_EQ_INT(offs[0], ref_off(path, g[0].value));
	if (nopie)	/* here vaddr and offset differ */
		CHECK(offs[0] != g[0].value);
	CHECK_EQ_INT(gr_elf__off_to_vaddr(e, offs[0], &va), 0);
	CHECK_EQ_INT(va, g[0].value);
	CHECK_EQ_STR(symb(e, va, &in), "gr_global_fn");
	CHECK_EQ_INT(in, 0);

	/* A size-0 function covers up to the next symbol. */
	CHECK_EQ_INT(ref_syms(path, "zfunc", z, MAXREF), 1);
	CHECK_EQ_INT(z[0].size, 0);
	CHECK_EQ_STR(symb(e, z[0].value + 2, &in), "zfunc");
	CHECK_EQ_INT(in, 2);

	/* A data address is in no function, nor is address 0. */
	CHECK_EQ_INT(shf("readelf -Ws '%s' | awk '$8 == \"global_counter\" "
			 "{ print $2 }' > '%s/gc'", path, tmpdir()), 0);
	char gcpath[256];
	unsigned long long gc = 0;
	snprintf(gcpath, sizeof(gcpath), "%s/gc", tmpdir());
	FILE *f = fopen(gcpath, "r");
	CHECK(f != NULL);
	int ok = fscanf(f, "%llx", &gc) == 1;
	fclose(f);
	CHECK(ok && gc != 0);
	CHECK(symb(e, gc, &in) == NULL);
	CHECK(symb(e, 0, &in) == NULL);
	CHECK_EQ_INT(gr_elf__off_to_vaddr(e, UINT64_MAX - 1, &va), -ENOENT);

	CHECK_EQ_INT(ref_syms(path, "main", v, MAXREF), 1);
	CHECK_EQ_INT(find1(path, "main", offs, 4), 1);
	CHECK(gr_elf__nfuncs(e) >= 5);
	CHECK_EQ_INT(ref_build_id(path, id, sizeof(id)), 0);
	CHECK(gr_elf__build_id(e) != NULL);
	CHECK_EQ_STR(gr_elf__build_id(e), id);
	gr_elf__close(e);
}

TEST(gcc_pie)
{
	check_c_exe("pie", 0);
}

TEST(gcc_nopie)
{
	check_c_exe("nopie", 1);
}

TEST(versioned)
{
	char path[256];
	struct ref_sym r[MAXREF];
	uint64_t offs[4] = { 0 }, exp[2], in = 99;
	struct gr_elf *e;

	CHECK_EQ_INT(build_c(), 0);
	snprintf(path, sizeof(path), "%s/libv.so", tmpdir());
	CHECK((e = gr_elf__open(path)) != NULL);
	/* vfunc@V1 and vfunc@@V2, in .dynsym and (spelled so) in .symtab. */
	CHECK_EQ_INT(ref_syms(path, "vfunc", r, MAXREF), 4);
	exp[0] = ref_off(path, r[0].value);
	exp[1] = ref_off(path, r[1].value);
	CHECK(exp[0] != exp[1]);
	qsort(exp, 2, sizeof(exp[0]), cmp_u64);
	CHECK_EQ_INT(find1(path, "vfunc", offs, 4), 2);
	CHECK_EQ_INT(offs[0], exp[0]);
	CHECK_EQ_INT(offs[1], exp[1]);
	CHECK_EQ_INT(find1(path, "vfunc_v1", offs, 4), 1);
	CHECK_EQ_INT(offs[0], exp[0]);
	CHECK_EQ_INT(find1(path, "vfun", offs, 4), 0);
	/* Aliases: the global, plain name wins over vfunc_v1 (local). */
	CHECK_EQ_STR(symb(e, r[0].value, &in), "vfunc");
	CHECK_EQ_INT(in, 0);
	gr_elf__close(e);

	/* Only .symtab's "vfunc@V1" and "vfunc@@V2" left to match. */
	snprintf(path, sizeof(path), "%s/libv_nodyn.so", tmpdir());
	CHECK((e = gr_elf__open(path)) != NULL);
	CHECK_EQ_INT(ref_syms(path, "vfunc", r, MAXREF), 2);
	CHECK(!r[0].dynsym && !r[1].dynsym);
	CHECK_EQ_INT(find1(path, "vfunc", offs, 4), 2);
	CHECK_EQ_INT(offs[0], exp[0]);
	CHECK_EQ_INT(offs[1], exp[1]);
	CHECK_EQ_INT(find1(path, "vfunc@V1", offs, 4), 1);
	CHECK_EQ_INT(offs[0], exp[0]);
	/* vfunc_v1 comes first in v.c, so lower: its global alias wins. */
	uint64_t low = r[0].value < r[1].value ? r[0].value : r[1].value;
	CHECK_EQ_STR(symb(e, low + 1, &in), "vfunc@V1");
	CHECK_EQ_INT(in, 1);
	gr_elf__close(e);
}

TEST(nvcc_static)
{
	static const char tmpl[] = "void gr::scale<double>(double*, double, int)";
	char path[256], cmd[512], *line = NULL;
	struct ref_sym r[MAXREF];
	uint64_t offs[4] = { 0 }, va = 0, in = 99;
	struct gr_elf *e;
	size_t cap = 0;
	int found = 0;
	char *d;

	if (access(NVCC, X_OK) != 0) {
		printf("skip: %s missing\n", NVCC);
		return;
	}
	CHECK_EQ_INT(build_cu(), 0);
	snprintf(path, sizeof(path), "%s/k", tmpdir());
	CHECK((e = gr_elf__open(path)) != NULL);

	/* The runtime is linked in: cudaLaunchKernel is local, .symtab only. */
	CHECK_EQ_INT(ref_syms(path, "cudaLaunchKernel", r, MAXREF), 1);
	CHECK_EQ_STR(r[0].bind, "LOCAL");
	CHECK(!r[0].dynsym);
	CHECK_EQ_INT(find1(path, "cudaLaunchKernel", offs, 4), 1);
	CHECK_EQ_INT(offs[0], ref_off(path, r[0].value));

	/* The host stub symbolizes back to itself. */
	CHECK_EQ_INT(ref_syms(path, "_Z5saxpyPfPKffi", r, MAXREF), 1);
	CHECK_EQ_INT(find1(path, "_Z5saxpyPfPKffi", offs, 4), 1);
	CHECK_EQ_INT(offs[0], ref_off(path, r[0].value));
	CHECK_EQ_INT(gr_elf__off_to_vaddr(e, offs[0], &va), 0);
	CHECK_EQ_INT(va, r[0].value);
	CHECK_EQ_STR(symb(e, va, &in), "_Z5saxpyPfPKffi");
	CHECK_EQ_INT(in, 0);
	d = gr_demangle("_Z5saxpyPfPKffi");
	CHECK_EQ_STR(d, "saxpy(float*, float const*, float, int)");
	free(d);

	/* The template's stub: whichever symbol demangles to it. */
	snprintf(cmd, sizeof(cmd), "readelf -Ws '%s' | awk '$4 == \"FUNC\" "
		 "&& $7 != \"UND\" && $8 ~ /^_ZN2gr/ { print $2, $8 }'", path);
	FILE *f = popen(cmd, "r");
	CHECK(f != NULL);
	while (getline(&line, &cap, f) > 0) {
		unsigned long long v;
		char sym[512];
		const char *s;

		if (sscanf(line, "%llx %511s", &v, sym) != 2)
			continue;
		d = gr_demangle(sym);
		if (d && !strcmp(d, tmpl)) {
			s = symb(e, v, &in);
			found = s && !strcmp(s, sym) && in == 0 ? 1 : -1;
		}
		free(d);
	}
	free(line);
	pclose(f);
	CHECK_EQ_INT(found, 1);
	gr_elf__close(e);
}

/* Checks the stubs read from stripped's registration code: exactly those
 * of saxpy and gr::scale<double> (not the __device__ variable), each at
 * the address of its host stub's symbol in full. */
static void check_stubreg(const char *full, const char *stripped)
{
	static const struct {
		const char *host[2], *device;
	} k[] = {
		{ { "_Z5saxpyPfPKffi", NULL }, "_Z5saxpyPfPKffi" },
		{ { "_ZN2gr5scaleIdEEvPT_S1_i", "_ZN2grL5scaleIdEEvPT_S1_i" },
		  "_ZN2gr5scaleIdEEvPT_S1_i" },
	};
	char fp[256], sp[256];
	struct gr_elf *e, *es;
	struct gr_stubreg *r;

	snprintf(fp, sizeof(fp), "%s/%s", tmpdir(), full);
	snprintf(sp, sizeof(sp), "%s/%s", tmpdir(), stripped);
	CHECK((e = gr_elf__open(fp)) != NULL);
	CHECK((es = gr_elf__open(sp)) != NULL);
	CHECK((r = gr_stubreg__scan(sp)) != NULL);
	CHECK_EQ_INT(gr_stubreg__count(r), 2);
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		uint64_t off = 0, va = 0, in = 0;
		int n = 0;
		for (int h = 0; h < 2 && !n; h++)
			if (k[i].host[h])
				n = find1(fp, k[i].host[h], &off, 1);
		CHECK_EQ_INT(n, 1);
		CHECK_EQ_INT(gr_elf__off_to_vaddr(e, off, &va), 0);
		/* The stripped file does not name the stub; its code does. */
		const char *sym = symb(es, va, &in);
		CHECK(!sym || in != 0);
		CHECK_EQ_STR(gr_stubreg__name(r, va), k[i].device);
		CHECK(gr_stubreg__name(r, va + 1) == NULL);
		CHECK(gr_stubreg__name(r, va - 1) == NULL);
	}
	gr_stubreg__free(r);
	/* The full file's code says the same. */
	CHECK((r = gr_stubreg__scan(fp)) != NULL);
	CHECK_EQ_INT(gr_stubreg__count(r), 2);
	gr_stubreg__free(r);
	gr_elf__close(es);
	gr_elf__close(e);
}

/* nvcc's defaults, and optimized PIC with hidden symbols (as PyTorch). */
TEST(stubreg_nvcc)
{
	if (access(NVCC, X_OK) != 0) {
		printf("skip: %s missing\n", NVCC);
		return;
	}
	CHECK_EQ_INT(build_cu(), 0);
	check_stubreg("k", "k_strip");
	check_stubreg("libk.so", "libk_strip.so");
	/* The same, giving pages back after every page read, so that
	 * anchors and calls straddle the scan's chunks. */
	gr_stubreg__set_chunk(4096);
	check_stubreg("k", "k_strip");
	check_stubreg("libk.so", "libk_strip.so");
	gr_stubreg__set_chunk(8u << 20);
}

/* A large library's registration code (cuBLASLt's: 500 MB, 15,000
 * kernels) is scanned without its code staying resident: the scan gives
 * pages back as it goes.  A child scans it and reports its peak RSS; with
 * the whole file mapped and kept, it was over 400 MiB. */
#define BIGLIB "/usr/local/cuda/lib64/libcublasLt.so.13"
TEST(stubreg_large_library_bounded)
{
	int fds[2];
	long out[2] = { -1, -1 };

	if (no_cuda(BIGLIB))
		return;
	CHECK(pipe(fds) == 0);
	pid_t p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		struct gr_stubreg *r = gr_stubreg__scan(BIGLIB);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		long v[2] = { r ? gr_stubreg__count(r) : -1, ru.ru_maxrss };
		ssize_t w = write(fds[1], v, sizeof(v));
		_exit(w == sizeof(v) ? 0 : 1);
	}
	close(fds[1]);
	CHECK(read(fds[0], out, sizeof(out)) == sizeof(out));
	close(fds[0]);
	int st;
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st));
	CHECK(out[0] > 10000);
	/* ASan's shadow memory included. */
	if (out[1] >= 160 * 1024)
		fprintf(stderr, "test_elfsyms.c: peak RSS %ld KiB scanning "
			"%s\n", out[1], BIGLIB);
	CHECK(out[1] < 160 * 1024);
}

TEST(stubreg_none_and_errors)
{
	char path[256];
	struct gr_stubreg *r;

	CHECK_EQ_INT(build_c(), 0);
	/* A program with calls but no registrations. */
	snprintf(path, sizeof(path), "%s/pie", tmpdir());
	CHECK((r = gr_stubreg__scan(path)) != NULL);
	CHECK_EQ_INT(gr_stubreg__count(r), 0);
	CHECK(gr_stubreg__name(r, 0x1000) == NULL);
	gr_stubreg__free(r);
	gr_stubreg__free(NULL);
	snprintf(path, sizeof(path), "%s/a.c", tmpdir());
	errno = 0;
	CHECK(gr_stubreg__scan(path) == NULL);
	CHECK_EQ_INT(errno, ENOEXEC);
	snprintf(path, sizeof(path), "%s/missing", tmpdir());
	errno = 0;
	CHECK(gr_stubreg__scan(path) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	errno = 0;
	CHECK(gr_stubreg__scan(tmpdir()) == NULL);
	CHECK_EQ_INT(errno, EISDIR);
}

TEST(demangle)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{ "_Z5saxpyPfPKffi", "saxpy(float*, float const*, float, int)" },
		{ "_ZN2gr5scaleIdEEvPT_S1_i",
		  "void gr::scale<double>(double*, double, int)" },
		{ "_ZN2grL5scaleIdEEvPT_S1_i",
		  "void gr::scale<double>(double*, double, int)" },
		{ "_Z3foov@@V2", "foo()@@V2" },
		{ "main", NULL },
		{ "cudaLaunchKernel", NULL },
		{ "_Zxx", NULL },
		{ "_Z", NULL },
		{ "", NULL },
		{ "_Zxx@V1", NULL },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *d = gr_demangle(v[i].in);
		int ok = v[i].out ? d && !strcmp(d, v[i].out) : !d;

		if (!ok)
			fprintf(stderr, "test_elfsyms.c: demangle \"%s\" -> "
				"\"%s\"\n", v[i].in, d ? d : "(null)");
		free(d);
		CHECK(ok);
	}
	CHECK(gr_demangle(NULL) == NULL);
}

/* Writes a copy of src to dst, first len bytes only (all if len < 0), with
 * byte at patch_at (if >= 0) set to val.  Returns 0, or -1. */
static int copy_patched(const char *src, const char *dst, long len,
			long patch_at, int val)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	long i = 0;
	int c, rc = -1;

	if (in && out) {
		while ((len < 0 || i < len) && (c = fgetc(in)) != EOF) {
			fputc(i == patch_at ? val : c, out);
			i++;
		}
		rc = 0;
	}
	if (in)
		fclose(in);
	if (out && fclose(out))
		rc = -1;
	return rc;
}

/* A library of BIG_N functions with long names (a PyTorch library in
 * small: its string tables are several times the 1 MiB that elfsyms.c
 * reads at a time, so names straddle its window): every function is found
 * by name at nm's address, and symbolizes to its name, read from the
 * file. */
#define BIG_N 40000
TEST(many_long_names)
{
	char path[256], name[160];
	const char *d = tmpdir();
	static char *names[BIG_N];
	uint64_t *addr = calloc(BIG_N, sizeof(*addr));
	CHECK(d != NULL && addr != NULL);
	snprintf(path, sizeof(path), "%s/big.s", d);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	for (int i = 0; i < BIG_N; i++) {
		/* Some wanted names end mangled ones: string tables are
		 * tail-merged, so a name may start inside another. */
		snprintf(name, sizeof(name), "%s_%0100d_%d", i % 3 ? "gr_big" :
			 "_ZN2gr3big", i, i);
		fprintf(f, ".globl %s\n.type %s,@function\n%s:\nret\n"
			".size %s, .-%s\n", name, name, name, name, name);
		CHECK((names[i] = strdup(name)) != NULL);
	}
	fprintf(f, ".section .note.GNU-stack,\"\",@progbits\n");
	fclose(f);
	CHECK_EQ_INT(shf("cd '%s' && gcc -shared -o libbig.so big.s && "
			 "nm -D --defined-only libbig.so > big.nm", d), 0);
	snprintf(path, sizeof(path), "%s/big.nm", d);
	CHECK((f = fopen(path, "r")) != NULL);
	unsigned long long v;
	char t, sym[256];
	int listed = 0;
	while (fscanf(f, "%llx %c %255s", &v, &t, sym) == 3) {
		int i = atoi(strrchr(sym, '_') + 1);
		if (i >= 0 && i < BIG_N && !strcmp(sym, names[i]) && t == 'T')
			addr[i] = v, listed++;
	}
	fclose(f);
	CHECK_EQ_INT(listed, BIG_N);

	snprintf(path, sizeof(path), "%s/libbig.so", d);
	struct gr_elf *e = gr_elf__open(path);
	struct gr_elf *fe = gr_elf__open_find(path, (const char *const *)names,
					      BIG_N);
	CHECK(e != NULL && fe != NULL);
	CHECK(gr_elf__nfuncs(e) >= BIG_N);
	/* Symbols, not names: well under a name's bytes each. */
	CHECK(gr_elf__bytes(e) < (size_t)BIG_N * 24 + 4096);
	int found = 0, named = 0;
	for (int i = 0; i < BIG_N; i++) {
		uint64_t off, va = 0, in = 99;
		if (gr_elf__find(fe, names[i], &off, 1) == 1 &&
		    gr_elf__off_to_vaddr(fe, off, &va) == 0 && va == addr[i])
			found++;
		const char *n = symb(e, addr[i], &in);
		named += n && !strcmp(n, names[i]) && in == 0;
	}
	CHECK_EQ_INT(found, BIG_N);
	CHECK_EQ_INT(named, BIG_N);
	gr_elf__close(fe);
	gr_elf__close(e);
	for (int i = 0; i < BIG_N; i++)
		free(names[i]);
	free(addr);
}

/* Sets the size of every string table section of the ELF at path to
 * 2^46.  Returns 0, or -1. */
static int big_strtabs(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDWR);
	int rc = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
	    eh.e_shentsize == sizeof(Elf64_Shdr)) {
		rc = 0;
		for (int i = 0; i < eh.e_shnum && !rc; i++) {
			Elf64_Shdr sh;
			off_t at = (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh));

			if (pread(fd, &sh, sizeof(sh), at) != sizeof(sh))
				rc = -1;
			else if (sh.sh_type == SHT_STRTAB) {
				sh.sh_size = 1ull << 46;
				if (pwrite(fd, &sh, sizeof(sh), at) != sizeof(sh))
					rc = -1;
			}
		}
	}
	close(fd);
	return rc;
}

TEST(open_errors)
{
	char path[256], src[256];
	struct stat st;
	struct gr_elf *e;

	CHECK_EQ_INT(build_c(), 0);
	snprintf(path, sizeof(path), "%s/a.c", tmpdir());
	errno = 0;
	CHECK(gr_elf__open(path) == NULL);
	CHECK_EQ_INT(errno, ENOEXEC);
	snprintf(path, sizeof(path), "%s/missing", tmpdir());
	errno = 0;
	CHECK(gr_elf__open(path) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	errno = 0;
	CHECK(gr_elf__open(tmpdir()) == NULL);
	CHECK_EQ_INT(errno, EISDIR);
	errno = 0;
	CHECK(gr_elf__open("/dev/null") == NULL);
	CHECK_EQ_INT(errno, ENOEXEC);
	/* A relocatable object has no addresses to attach to. */
	snprintf(path, sizeof(path), "%s/a.o", tmpdir());
	errno = 0;
	CHECK(gr_elf__open(path) == NULL);
	CHECK_EQ_INT(errno, ENOEXEC);

	snprintf(src, sizeof(src), "%s/pie", tmpdir());
	snprintf(path, sizeof(path), "%s/patched", tmpdir());
	/* Empty; 32-bit class; another machine (EM_AARCH64 = 183). */
	CHECK_EQ_INT(copy_patched(src, path, 0, -1, 0), 0);
	errno = 0;
	CHECK(gr_elf__open(path) == NULL);
	CHECK_EQ_INT(errno, ENOEXEC);
	CHECK_EQ_INT(copy_patched(src, path, -1, 4, 1), 0);
	errno = 0;
	CHECK(gr_elf__open(path) == NULL);
	CHECK_EQ_INT(errno, ENOEXEC);
	CHECK_EQ_INT(copy_patched(src, path, -1, 18, 183), 0);
	errno = 0;
	CHECK(gr_elf__open(path) == NULL);
	CHECK_EQ_INT(errno, ENOEXEC);
	/* The unpatched copy opens. */
	CHECK_EQ_INT(copy_patched(src, path, -1, -1, 0), 0);
	CHECK((e = gr_elf__open(path)) != NULL);
	CHECK(gr_elf__nfuncs(e) > 0);
	gr_elf__close(e);
	gr_elf__close(NULL);

	/* String tables said to be 64 TiB long (a hostile file: any process
	 * may map one): not read, nothing sized by them. */
	CHECK_EQ_INT(big_strtabs(path), 0);
	CHECK((e = gr_elf__open(path)) != NULL);
	CHECK_EQ_INT(gr_elf__nfuncs(e), 0);
	gr_elf__close(e);
	static const char *const mainfn[] = { "main" };
	CHECK((e = gr_elf__open_find(path, mainfn, 1)) != NULL);
	CHECK_EQ_INT(gr_elf__has_any(e, mainfn, 1), 0);
	gr_elf__close(e);

	/* Truncated anywhere: NULL with ENOEXEC, or a usable index. */
	CHECK_EQ_INT(stat(src, &st), 0);
	for (long len = 1; len < st.st_size; len += len < 256 ? 7 : 997) {
		uint64_t off, va;

		CHECK_EQ_INT(copy_patched(src, path, len, -1, 0), 0);
		errno = 0;
		if (!(e = gr_elf__open(path))) {
			if (errno != ENOEXEC)
				fprintf(stderr, "test_elfsyms.c: truncated to "
					"%ld: errno %d\n", len, errno);
			CHECK_EQ_INT(errno, ENOEXEC);
			continue;
		}
		find1(path, "helper", &off, 1);
		symb(e, 0x1140, &off);
		gr_elf__off_to_vaddr(e, 0x1140, &va);
		gr_elf__build_id(e);
		gr_elf__close(e);
	}
}

/* A function of this very test, to find through /proc/self. */
static __attribute__((noinline)) int marker_fn(int x)
{
	return x + 1;
}

TEST(self_maps)
{
	int (*volatile fp)(int) = marker_fn;
	uint64_t addr = (uint64_t)(uintptr_t)fp, va = 0, in = 99, offs[2];
	unsigned long long start = 0, end = 0, off = 0;
	char *line = NULL, id[256], mf[128];
	size_t cap = 0;
	struct gr_elf *e;
	int hit = 0;
	FILE *f;

	CHECK_EQ_INT(fp(1), 2);
	CHECK((f = fopen("/proc/self/maps", "r")) != NULL);
	while (!hit && getline(&line, &cap, f) > 0)
		hit = sscanf(line, "%llx-%llx %*s %llx", &start, &end,
			     &off) == 3 && addr >= start && addr < end;
	free(line);
	fclose(f);
	CHECK(hit);

	/* The mapping's own file when /proc lets us, else the exe. */
	snprintf(mf, sizeof(mf), "/proc/self/map_files/%llx-%llx", start, end);
	const char *opened = mf;
	if (!(e = gr_elf__open(mf)))
		e = gr_elf__open(opened = "/proc/self/exe");
	CHECK(e != NULL);
	CHECK_EQ_INT(gr_elf__off_to_vaddr(e, addr - start + off, &va), 0);
	CHECK_EQ_STR(symb(e, va, &in), "marker_fn");
	CHECK_EQ_INT(in, 0);
	CHECK_EQ_INT(find1(opened, "marker_fn", offs, 2), 1);
	CHECK_EQ_INT(offs[0], addr - start + off);
	/* Not /proc/self: readelf would read its own. */
	snprintf(mf, sizeof(mf), "/proc/%d/exe", (int)getpid());
	CHECK_EQ_INT(ref_build_id(mf, id, sizeof(id)), 0);
	CHECK_EQ_STR(gr_elf__build_id(e), id);
	gr_elf__close(e);
}

TEST_MAIN(
	TEST_ENTRY(cudart_find)
	TEST_ENTRY(gcc_pie)
	TEST_ENTRY(gcc_nopie)
	TEST_ENTRY(versioned)
	TEST_ENTRY(nvcc_static)
	TEST_ENTRY(stubreg_nvcc)
	TEST_ENTRY(stubreg_large_library_bounded)
	TEST_ENTRY(stubreg_none_and_errors)
	TEST_ENTRY(demangle)
	TEST_ENTRY(many_long_names)
	TEST_ENTRY(open_errors)
	TEST_ENTRY(self_maps)
)
