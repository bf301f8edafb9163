-- Accounting ingest (issue 26): radacct_nasip_idx (every row, by NAS) served no query: the open
-- sessions of a NAS (Accounting-On/Off, reconciliation, the disconnect check) go through the partial
-- radacct_open_nas_idx. It cost an index entry for every Start, Stop and non-HOT Interim-Update, and
-- grew with the history.
DROP INDEX "radacct_nasip_idx";
