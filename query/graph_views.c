/* graph_views.c - what ran inside CUDA graphs, as two SQL views.
 *
 * A kernel launched into a stream under capture does not run: the driver
 * adds it to the graph the capture returns, and it runs each time an
 * executable graph instantiated from that graph is launched.  gpurecd
 * records such a launch in cuda_kernel like any other (the probes cannot
 * tell), and the capture's begin and end, the instantiation and every
 * graph launch in cuda_graph.  The tie between them is made here, at query
 * time, rather than as a column the decoder writes:
 *
 *  - it needs no state in the recorder and no new column, so recordings
 *    made before it answer too;
 *  - captures are rare next to launches (a program captures its graphs
 *    once, then replays them), so the join reads cuda_kernel only inside
 *    capture intervals: the capture list is the outer loop (CROSS JOIN),
 *    and the kernel scan gets host, pid, stream and both ts bounds pushed
 *    down, which prunes every block outside the interval (vt_event.c).
 *    A program captures its graphs in a burst (one per batch size), many
 *    to a block: captures of a stream less than 1 s apart are read as one
 *    interval (one scan, not one per capture: 320 captures of 8 processes
 *    took 2.5 s, 8 scans take 0.4 s), and a running max over the
 *    interval's captures and launches in time order gives each launch its
 *    capture (no range join);
 *  - its limits are the same a decoder would have without the driver's
 *    capture state: a launch counts when it is made into the capturing
 *    stream (same host and pid) between a successful capture_begin and
 *    the next successful capture_end of that stream.  Work that a capture
 *    forks onto other streams through events (cudaStreamWaitEvent on a
 *    capturing event) is not seen; nor are graphs built with the graph API
 *    (cudaGraphAddKernelNode) or captured before the recording began.
 *
 * Handles are reused once freed: an instantiation belongs to the latest
 * capture that returned its graph handle before it, and a graph launch to
 * the latest instantiation that returned its executable graph handle
 * before it.  The launch counts group all graph launches of a handle in
 * one pass (no window over them) and split a handle's launches by
 * instantiation only for handles instantiated more than once, or launched
 * before their one instantiation (a life that began before the recording).
 *
 * cuda_graph_kernel: one row per kernel of a captured graph and per
 * executable graph made from it (graph_exec NULL where it was never
 * instantiated in the recording).
 * cuda_graph_exec: one row per life of an executable graph that was
 * launched: its graph, its successful graph launches (a failed launch runs
 * nothing), the first and last; instantiate_ts and graph NULL where its
 * instantiation was not seen (it was captured before the recording).
 */
#include <stddef.h>
#include <string.h>

#include "query/graph_views.h"

#define VCOLS(a) (a), (int)(sizeof(a) / sizeof((a)[0]))

static const struct gr_view_col kernel_cols[] = {
	{ "host", GR_HOST, "Host name the recording was made on" },
	{ "pid", GR_INT, "Process id" },
	{ "graph", GR_INT, "Graph handle the capture returned" },
	{ "graph_exec", GR_INT, "Executable graph instantiated from it, NULL "
	  "where the graph was never instantiated in the recording" },
	{ "seq", GR_INT, "The kernel's order in the capture, from 1" },
	{ "kernel", GR_STR, "Demangled kernel name, NULL if unknown" },
	{ "kernel_mangled", GR_STR, "Mangled kernel name" },
	{ "grid_x", GR_INT, "Grid dimension x" },
	{ "grid_y", GR_INT, "Grid dimension y" },
	{ "grid_z", GR_INT, "Grid dimension z" },
	{ "block_x", GR_INT, "Block dimension x" },
	{ "block_y", GR_INT, "Block dimension y" },
	{ "block_z", GR_INT, "Block dimension z" },
	{ "shared_mem", GR_INT, "Dynamic shared memory, bytes" },
	{ "stream", GR_INT, "The capturing stream" },
	{ "tid", GR_INT, "Thread that launched it" },
	{ "ts", GR_TS, "Its launch at capture time (it ran only when the "
	  "graph was launched)" },
	{ "capture_ts", GR_TS, "The capture's begin call" },
	{ "capture_end_ts", GR_TS, "The capture's end call" },
	{ "instantiate_ts", GR_TS, "The instantiation, NULL where none" },
};

static const struct gr_view_col exec_cols[] = {
	{ "host", GR_HOST, "Host name the recording was made on" },
	{ "pid", GR_INT, "Process id" },
	{ "graph", GR_INT, "Graph instantiated, NULL where the instantiation "
	  "was not seen (captured before the recording or --since)" },
	{ "graph_exec", GR_INT, "Executable graph handle" },
	{ "instantiate_ts", GR_TS, "The instantiation, NULL where not seen" },
	{ "launches", GR_INT, "Successful graph launches of this life (a "
	  "failed one runs nothing)" },
	{ "first_ts", GR_TS, "First of them" },
	{ "last_ts", GR_TS, "Last of them" },
};

const struct gr_view gr_graph_views[] = {
	{ "cuda_graph_kernel", "View: the kernels of each captured CUDA "
	  "graph in capture order, per executable graph made from it "
	  "(cuda_kernel rows launched under capture, tied to cuda_graph's "
	  "captures and instantiations)", VCOLS(kernel_cols) },
	{ "cuda_graph_exec", "View: each life of a launched executable CUDA "
	  "graph: its graph, instantiation and successful launches",
	  VCOLS(exec_cols) },
};
const int gr_graph_nviews = sizeof(gr_graph_views) / sizeof(gr_graph_views[0]);

const struct gr_view *gr_graph_view__find(const char *name)
{
	for (int i = 0; i < gr_graph_nviews; i++)
		if (!strcmp(gr_graph_views[i].name, name))
			return &gr_graph_views[i];
	return NULL;
}

static const char *const views[] = {
	"CREATE TEMP VIEW cuda_graph_kernel AS\n"
	"WITH cap AS MATERIALIZED (\n"
	"  SELECT host, pid, stream, ts AS capture_ts, end_ts, graph\n"
	"  FROM (SELECT host, pid, stream, op, ts, ret,\n"
	"               lead(op) OVER w AS next_op, lead(ts) OVER w AS end_ts,\n"
	"               lead(graph) OVER w AS graph,\n"
	"               lead(ret) OVER w AS end_ret\n"
	"        FROM cuda_graph\n"
	"        WHERE op IN ('capture_begin', 'capture_end') AND ret = 0\n"
	"        WINDOW w AS (PARTITION BY host, pid, stream ORDER BY ts))\n"
	"  WHERE op = 'capture_begin' AND next_op = 'capture_end'\n"
	"    AND end_ret = 0 AND graph IS NOT NULL AND graph != 0\n"
	"), capc AS MATERIALIZED (\n"
	"  SELECT *, sum(new) OVER (PARTITION BY host, pid, stream\n"
	"                           ORDER BY capture_ts) AS cl\n"
	"  FROM (SELECT *, CASE WHEN capture_ts - lag(end_ts) OVER (\n"
	"                              PARTITION BY host, pid, stream\n"
	"                              ORDER BY capture_ts) < 1000000000\n"
	"                       THEN 0 ELSE 1 END AS new\n"
	"        FROM cap)\n"
	"), kin AS MATERIALIZED (\n"
	"  SELECT k.host, k.pid, k.stream, k.ts, k.tid, k.kernel,\n"
	"         k.kernel_mangled, k.grid_x, k.grid_y, k.grid_z, k.block_x,\n"
	"         k.block_y, k.block_z, k.shared_mem\n"
	"  FROM (SELECT host, pid, stream, cl, min(capture_ts) AS lo,\n"
	"               max(end_ts) AS hi\n"
	"        FROM capc GROUP BY host, pid, stream, cl) u\n"
	"  CROSS JOIN cuda_kernel k\n"
	"  WHERE k.host = u.host AND k.pid = u.pid AND k.stream = u.stream\n"
	"    AND k.ts > u.lo AND k.ts < u.hi AND k.ret = 0\n"
	"), tag AS MATERIALIZED (\n"
	"  SELECT *, max(cts) OVER (PARTITION BY host, pid, stream\n"
	"                           ORDER BY ts, cts IS NOT NULL\n"
	"                           ROWS UNBOUNDED PRECEDING) AS capture_ts\n"
	"  FROM (SELECT host, pid, stream, capture_ts AS ts, capture_ts AS cts,\n"
	"               NULL AS tid, NULL AS kernel, NULL AS kernel_mangled,\n"
	"               NULL AS grid_x, NULL AS grid_y, NULL AS grid_z,\n"
	"               NULL AS block_x, NULL AS block_y, NULL AS block_z,\n"
	"               NULL AS shared_mem\n"
	"        FROM capc\n"
	"        UNION ALL\n"
	"        SELECT host, pid, stream, ts, NULL, tid, kernel,\n"
	"               kernel_mangled, grid_x, grid_y, grid_z, block_x,\n"
	"               block_y, block_z, shared_mem\n"
	"        FROM kin)\n"
	"), ker AS MATERIALIZED (\n"
	"  SELECT c.host, c.pid, c.graph, c.capture_ts, c.end_ts,\n"
	"         row_number() OVER (PARTITION BY c.host, c.pid, c.stream,\n"
	"                                         c.capture_ts\n"
	"                            ORDER BY k.ts, k.tid) AS seq,\n"
	"         k.ts, k.tid, k.kernel, k.kernel_mangled, k.grid_x, k.grid_y,\n"
	"         k.grid_z, k.block_x, k.block_y, k.block_z, k.shared_mem,\n"
	"         k.stream\n"
	"  FROM tag k JOIN capc c\n"
	"    ON c.host = k.host AND c.pid = k.pid AND c.stream = k.stream\n"
	"   AND c.capture_ts = k.capture_ts\n"
	"  WHERE k.cts IS NULL AND k.ts < c.end_ts\n"
	"), inst AS MATERIALIZED (\n"
	"  SELECT host, pid, graph, graph_exec, ts\n"
	"  FROM cuda_graph\n"
	"  WHERE op = 'instantiate' AND ret = 0 AND graph_exec != 0\n"
	")\n"
	"SELECT k.host, k.pid, k.graph, i.graph_exec, k.seq, k.kernel,\n"
	"       k.kernel_mangled, k.grid_x, k.grid_y, k.grid_z, k.block_x,\n"
	"       k.block_y, k.block_z, k.shared_mem, k.stream, k.tid,\n"
	"       k.ts, k.capture_ts, k.end_ts AS capture_end_ts,\n"
	"       i.ts AS instantiate_ts\n"
	"FROM ker k\n"
	"LEFT JOIN inst i\n"
	"  ON i.host = k.host AND i.pid = k.pid AND i.graph = k.graph\n"
	" AND i.ts > k.end_ts\n"
	" AND NOT EXISTS (SELECT 1 FROM cap c2\n"
	"                 WHERE c2.host = k.host AND c2.pid = k.pid\n"
	"                   AND c2.graph = k.graph\n"
	"                   AND c2.end_ts > k.end_ts AND c2.end_ts < i.ts)",

	"CREATE TEMP VIEW cuda_graph_exec AS\n"
	"WITH inst AS MATERIALIZED (\n"
	"  SELECT host, pid, graph, graph_exec, ts,\n"
	"         lead(ts) OVER (PARTITION BY host, pid, graph_exec\n"
	"                        ORDER BY ts) AS next_ts\n"
	"  FROM cuda_graph\n"
	"  WHERE op = 'instantiate' AND ret = 0 AND graph_exec != 0\n"
	"), ni AS (\n"
	"  SELECT host, pid, graph_exec, count(*) AS n, min(ts) AS first_inst,\n"
	"         min(graph) AS graph\n"
	"  FROM inst GROUP BY host, pid, graph_exec\n"
	/* Graph launches are the rows with both an executable graph and a
	 * stream (instantiations and destroys have no stream): integer
	 * filters the scan applies itself, and one column to group by, which
	 * it emits grouped (vt_grouped.c), with no sort.  A handle launched by
	 * two processes is counted again below, per process. */
	"), lc AS MATERIALIZED (\n"
	"  SELECT graph_exec, count(*) AS launches, min(ts) AS first_ts,\n"
	"         max(ts) AS last_ts, min(pid) AS pid, max(pid) AS pid_hi,\n"
	"         min(host) AS host, max(host) AS host_hi\n"
	"  FROM cuda_graph\n"
	"  WHERE graph_exec > 0 AND stream >= 0 AND ret = 0\n"
	"  GROUP BY graph_exec\n"
	"), hp AS MATERIALIZED (\n"
	"  SELECT host, pid, graph_exec, launches, first_ts, last_ts FROM lc\n"
	"  WHERE pid = pid_hi AND host = host_hi\n"
	"  UNION\n"
	"  SELECT l.host, l.pid, l.graph_exec, NULL, NULL, NULL\n"
	"  FROM lc CROSS JOIN cuda_graph l\n"
	"  WHERE (lc.pid != lc.pid_hi OR lc.host != lc.host_hi)\n"
	"    AND l.graph_exec = lc.graph_exec AND l.stream >= 0 AND l.ret = 0\n"
	"), s AS MATERIALIZED (\n"
	"  SELECT hp.*, ni.n, ni.first_inst, ni.graph,\n"
	"         launches IS NOT NULL AND (ni.n IS NULL OR\n"
	"             (ni.n = 1 AND hp.first_ts > ni.first_inst)) AS simple\n"
	"  FROM hp LEFT JOIN ni USING (host, pid, graph_exec)\n"
	"), lives AS (\n"
	/* One process's handle instantiated at most once, and not launched
	 * before: its counts as grouped.  Never instantiated in the
	 * recording: one life, begun before it. */
	"  SELECT host, pid, graph, graph_exec, first_inst AS inst_ts,\n"
	"         launches, first_ts, last_ts\n"
	"  FROM s WHERE simple\n"
	"  UNION ALL\n"
	/* The rest: the launches of each life (and of the one before the
	 * first instantiation seen) counted within its bounds, the handle,
	 * process and times pushed down to the scan. */
	"  SELECT iv.host, iv.pid, iv.graph, iv.graph_exec, iv.ts, count(*),\n"
	"         min(l.ts), max(l.ts)\n"
	"  FROM (SELECT i.host, i.pid, i.graph, i.graph_exec, i.ts, i.next_ts\n"
	"        FROM inst i JOIN s USING (host, pid, graph_exec)\n"
	"        WHERE NOT s.simple\n"
	"        UNION ALL\n"
	"        SELECT host, pid, NULL, graph_exec, NULL, first_inst FROM s\n"
	"        WHERE NOT simple) iv\n"
	"  CROSS JOIN cuda_graph l\n"
	"  WHERE l.host = iv.host AND l.pid = iv.pid\n"
	"    AND l.graph_exec = iv.graph_exec AND l.stream >= 0\n"
	"    AND l.ret = 0 AND l.ts > coalesce(iv.ts, 0)\n"
	"    AND l.ts < coalesce(iv.next_ts, 9223372036854775807)\n"
	"  GROUP BY iv.host, iv.pid, iv.graph, iv.graph_exec, iv.ts\n"
	")\n"
	/* No join after lives: a report that gates the view off with a
	 * constant WHERE reads nothing (an automatic index would be built
	 * first). */
	"SELECT host, pid, graph, graph_exec, inst_ts AS instantiate_ts,\n"
	"       launches, first_ts, last_ts\n"
	"FROM lives",
};

int gr_graph_views__create(sqlite3 *db)
{
	int rc = SQLITE_OK;

	for (size_t i = 0; i < sizeof(views) / sizeof(*views) && rc == SQLITE_OK;
	     i++)
		rc = sqlite3_exec(db, views[i], NULL, NULL, NULL);
	return rc;
}
