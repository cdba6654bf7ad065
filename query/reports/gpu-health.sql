-- name: gpu-health
-- description: per GPU: samples, Xids by number (count, first and last time, meaning), ECC errors, remapped rows, share of time throttled by reason, hottest temperature, time at the power limit, times lost; one line each
-- param: power_pct:count=98 power draw at or over this % of the limit counts as at the limit
-- One pass over gpu: every per-GPU figure is an aggregate of its group.
WITH reason(bit, r, o) AS (
  VALUES (4, 'sw_power_cap', 1), (8, 'hw_slowdown', 2), (32, 'sw_thermal', 3),
         (64, 'hw_thermal', 4), (128, 'hw_power_brake', 5),
         (16, 'sync_boost', 6)
), dev AS (
  SELECT host, gpu, pci, max(name) AS name, count(*) AS n, min(ts) AS t0,
         max(ts) AS t1,
         sum(ecc_corrected) AS sbe,
         min(CASE WHEN ecc_corrected > 0 THEN ts END) AS sbe0,
         max(CASE WHEN ecc_corrected > 0 THEN ts END) AS sbe1,
         sum(ecc_uncorrected) AS dbe,
         min(CASE WHEN ecc_uncorrected > 0 THEN ts END) AS dbe0,
         max(CASE WHEN ecc_uncorrected > 0 THEN ts END) AS dbe1,
         max(ecc_corrected_total) AS sbe_all,
         max(ecc_uncorrected_total) AS dbe_all,
         max(remapped_corr) AS rcorr, max(remapped_unc) AS runc,
         max(remap_pending) AS rpend,
         sum(pcie_replays) AS rep,
         min(CASE WHEN pcie_replays > 0 THEN ts END) AS rep0,
         max(CASE WHEN pcie_replays > 0 THEN ts END) AS rep1,
         sum(nvlink_crc) AS crc,
         min(CASE WHEN nvlink_crc > 0 THEN ts END) AS crc0,
         max(CASE WHEN nvlink_crc > 0 THEN ts END) AS crc1,
         sum((throttle_mask & 4) != 0) AS th4,
         min(CASE WHEN (throttle_mask & 4) != 0 THEN ts END) AS th4_0,
         max(CASE WHEN (throttle_mask & 4) != 0 THEN ts END) AS th4_1,
         sum((throttle_mask & 8) != 0) AS th8,
         min(CASE WHEN (throttle_mask & 8) != 0 THEN ts END) AS th8_0,
         max(CASE WHEN (throttle_mask & 8) != 0 THEN ts END) AS th8_1,
         sum((throttle_mask & 32) != 0) AS th32,
         min(CASE WHEN (throttle_mask & 32) != 0 THEN ts END) AS th32_0,
         max(CASE WHEN (throttle_mask & 32) != 0 THEN ts END) AS th32_1,
         sum((throttle_mask & 64) != 0) AS th64,
         min(CASE WHEN (throttle_mask & 64) != 0 THEN ts END) AS th64_0,
         max(CASE WHEN (throttle_mask & 64) != 0 THEN ts END) AS th64_1,
         sum((throttle_mask & 128) != 0) AS th128,
         min(CASE WHEN (throttle_mask & 128) != 0 THEN ts END) AS th128_0,
         max(CASE WHEN (throttle_mask & 128) != 0 THEN ts END) AS th128_1,
         sum((throttle_mask & 16) != 0) AS th16,
         min(CASE WHEN (throttle_mask & 16) != 0 THEN ts END) AS th16_0,
         max(CASE WHEN (throttle_mask & 16) != 0 THEN ts END) AS th16_1,
         sum(power_mw * 100 >= power_limit_mw * CAST(:power_pct AS REAL)) AS pl,
         min(CASE WHEN power_mw * 100 >= power_limit_mw * CAST(:power_pct AS REAL)
                  THEN ts END) AS pl0,
         max(CASE WHEN power_mw * 100 >= power_limit_mw * CAST(:power_pct AS REAL)
                  THEN ts END) AS pl1,
         max(temp_c) AS tmax
  FROM gpu GROUP BY host, gpu, pci
), th AS (
  -- Per reason: (samples throttled, first, last).
  SELECT dev.host, dev.gpu, dev.pci, dev.n, reason.o, reason.r,
         CASE reason.bit WHEN 4 THEN th4 WHEN 8 THEN th8 WHEN 32 THEN th32
              WHEN 64 THEN th64 WHEN 128 THEN th128 ELSE th16 END AS k,
         CASE reason.bit WHEN 4 THEN th4_0 WHEN 8 THEN th8_0
              WHEN 32 THEN th32_0 WHEN 64 THEN th64_0
              WHEN 128 THEN th128_0 ELSE th16_0 END AS k0,
         CASE reason.bit WHEN 4 THEN th4_1 WHEN 8 THEN th8_1
              WHEN 32 THEN th32_1 WHEN 64 THEN th64_1
              WHEN 128 THEN th128_1 ELSE th16_1 END AS k1
  FROM dev JOIN reason
  -- A join USING these drops NULL keys: the shares never counted them.
  WHERE dev.host IS NOT NULL AND dev.gpu IS NOT NULL AND dev.pci IS NOT NULL
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
  -- Errors while recorded (the increases), and since the driver loaded.
  SELECT host, gpu, pci, 3, 'ecc_corrected', coalesce(sbe, 0), sbe0, sbe1,
         'errors while recorded; ' || sbe_all || ' since the driver loaded'
  FROM dev WHERE sbe > 0 OR sbe_all > 0
  UNION ALL
  SELECT host, gpu, pci, 4, 'ecc_uncorrected', coalesce(dbe, 0), dbe0, dbe1,
         'errors while recorded; ' || dbe_all || ' since the driver loaded'
  FROM dev WHERE dbe > 0 OR dbe_all > 0
  UNION ALL
  SELECT host, gpu, pci, 5, 'remapped_rows',
         coalesce(rcorr, 0) + coalesce(runc, 0), t0, t1,
         coalesce(rcorr, 0) || ' correctable, ' || coalesce(runc, 0) ||
         ' uncorrectable' ||
         CASE WHEN rpend > 0 THEN '; a reset is pending' ELSE '' END
  FROM dev WHERE coalesce(rcorr, 0) + coalesce(runc, 0) > 0 OR rpend > 0
  UNION ALL
  SELECT host, gpu, pci, 6, 'pcie_replays', rep, rep0, rep1, 'replays'
  FROM dev WHERE rep > 0
  UNION ALL
  SELECT host, gpu, pci, 7, 'nvlink_crc', crc, crc0, crc1, 'CRC errors'
  FROM dev WHERE crc > 0
  UNION ALL
  SELECT host, gpu, pci, 10 + o, 'throttled ' || r, round(100.0 * k / n, 1),
         k0, k1, '% of samples'
  FROM th WHERE k > 0
  UNION ALL
  SELECT host, gpu, pci, 20, 'at_power_limit', round(100.0 * pl / n, 1),
         pl0, pl1, '% of samples'
  FROM dev
  WHERE pl > 0 AND host IS NOT NULL AND gpu IS NOT NULL AND pci IS NOT NULL
  UNION ALL
  SELECT host, gpu, pci, 21, 'temp_max_c', tmax, t0, t1, 'degrees C'
  FROM dev WHERE tmax IS NOT NULL
)
SELECT host, gpu, pci, item, value, first_ts, last_ts, detail
FROM lines
ORDER BY host, gpu IS NULL, gpu, pci, o, item
