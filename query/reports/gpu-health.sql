-- name: gpu-health
-- description: per GPU: samples, Xids by number (count, first and last time, meaning), ECC errors, remapped rows, share of time throttled by reason, hottest temperature, time at the power limit, times lost; one line each
-- param: power_pct=98 power draw at or over this % of the limit counts as at the limit
WITH g AS (
  SELECT host, gpu, pci, name, ts, temp_c, power_mw, power_limit_mw,
         throttle_mask, ecc_corrected, ecc_uncorrected, remapped_corr,
         remapped_unc, remap_pending, pcie_replays, nvlink_crc
  FROM gpu
), dev AS (
  SELECT host, gpu, pci, max(name) AS name, count(*) AS n, min(ts) AS t0,
         max(ts) AS t1
  FROM g GROUP BY host, gpu, pci
), reason(bit, r, o) AS (
  VALUES (4, 'sw_power_cap', 1), (8, 'hw_slowdown', 2), (32, 'sw_thermal', 3),
         (64, 'hw_thermal', 4), (128, 'hw_power_brake', 5),
         (16, 'sync_boost', 6)
), lines AS (
  SELECT host, gpu, pci, 0 AS o, 'samples' AS item, n AS value, t0 AS first_ts,
         t1 AS last_ts, name AS detail
  FROM dev
  UNION ALL
  SELECT host, gpu, pci, 1, 'xid ' || xid, count(*), min(ts), max(ts),
         coalesce(max(meaning), 'not in the Xid catalog')
  FROM gpu_event WHERE kind = 'xid' GROUP BY host, gpu, pci, xid
  UNION ALL
  SELECT host, gpu, pci, 2, kind, count(*), min(ts), max(ts), max(detail)
  FROM gpu_event WHERE kind IN ('gpu_lost', 'driver', 'persistence')
  GROUP BY host, gpu, pci, kind
  UNION ALL
  SELECT host, gpu, pci, 3, 'ecc_corrected', sum(ecc_corrected),
         min(CASE WHEN ecc_corrected > 0 THEN ts END),
         max(CASE WHEN ecc_corrected > 0 THEN ts END), 'errors'
  FROM g GROUP BY host, gpu, pci HAVING sum(ecc_corrected) > 0
  UNION ALL
  SELECT host, gpu, pci, 4, 'ecc_uncorrected', sum(ecc_uncorrected),
         min(CASE WHEN ecc_uncorrected > 0 THEN ts END),
         max(CASE WHEN ecc_uncorrected > 0 THEN ts END), 'errors'
  FROM g GROUP BY host, gpu, pci HAVING sum(ecc_uncorrected) > 0
  UNION ALL
  SELECT host, gpu, pci, 5, 'remapped_rows',
         max(remapped_corr) + max(remapped_unc), min(ts), max(ts),
         max(remapped_corr) || ' correctable, ' || max(remapped_unc) ||
         ' uncorrectable' ||
         CASE WHEN max(remap_pending) > 0 THEN '; a reset is pending'
              ELSE '' END
  FROM g GROUP BY host, gpu, pci
  HAVING max(remapped_corr) + max(remapped_unc) > 0 OR max(remap_pending) > 0
  UNION ALL
  SELECT host, gpu, pci, 6, 'pcie_replays', sum(pcie_replays),
         min(CASE WHEN pcie_replays > 0 THEN ts END),
         max(CASE WHEN pcie_replays > 0 THEN ts END), 'replays'
  FROM g GROUP BY host, gpu, pci HAVING sum(pcie_replays) > 0
  UNION ALL
  SELECT host, gpu, pci, 7, 'nvlink_crc', sum(nvlink_crc),
         min(CASE WHEN nvlink_crc > 0 THEN ts END),
         max(CASE WHEN nvlink_crc > 0 THEN ts END), 'CRC errors'
  FROM g GROUP BY host, gpu, pci HAVING sum(nvlink_crc) > 0
  UNION ALL
  SELECT g.host, g.gpu, g.pci, 10 + reason.o, 'throttled ' || reason.r,
         round(100.0 * sum((g.throttle_mask & reason.bit) != 0) / dev.n, 1),
         min(CASE WHEN (g.throttle_mask & reason.bit) != 0 THEN g.ts END),
         max(CASE WHEN (g.throttle_mask & reason.bit) != 0 THEN g.ts END),
         '% of samples'
  FROM g JOIN dev USING (host, gpu, pci) JOIN reason
  GROUP BY g.host, g.gpu, g.pci, reason.r
  HAVING sum((g.throttle_mask & reason.bit) != 0) > 0
  UNION ALL
  SELECT g.host, g.gpu, g.pci, 20, 'at_power_limit',
         round(100.0 * sum(g.power_mw * 100 >= g.power_limit_mw * :power_pct)
               / dev.n, 1),
         min(CASE WHEN g.power_mw * 100 >= g.power_limit_mw * :power_pct
                  THEN g.ts END),
         max(CASE WHEN g.power_mw * 100 >= g.power_limit_mw * :power_pct
                  THEN g.ts END),
         '% of samples'
  FROM g JOIN dev USING (host, gpu, pci)
  GROUP BY g.host, g.gpu, g.pci
  HAVING sum(g.power_mw * 100 >= g.power_limit_mw * :power_pct) > 0
  UNION ALL
  SELECT host, gpu, pci, 21, 'temp_max_c', max(temp_c), min(ts), max(ts),
         'degrees C'
  FROM g GROUP BY host, gpu, pci HAVING max(temp_c) IS NOT NULL
)
SELECT host, gpu, pci, item, value, first_ts, last_ts, detail
FROM lines
ORDER BY host, gpu IS NULL, gpu, pci, o, item
