-- Executors a call got no answer from (refused, reset, timed out): every admin of the database
-- routes around them until they beat again or answer a probe. One row per address, whichever
-- groups it serves: what failed is the process behind it. `since` is when the first admin that
-- noticed marked it (epoch ms), `reason` what its call met, `noted_by` that admin's id.
CREATE TABLE executor_suspect (
    address  TEXT   PRIMARY KEY,
    since    BIGINT NOT NULL,
    reason   TEXT   NOT NULL DEFAULT '',
    noted_by TEXT   NOT NULL DEFAULT ''
);
