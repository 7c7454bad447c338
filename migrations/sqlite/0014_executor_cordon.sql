-- Executors cordoned for a drain: no new runs go to them (their running ones finish) until an
-- administrator lifts it. One row per address as given; matched without case or trailing slash.
CREATE TABLE executor_cordon (
    address TEXT   PRIMARY KEY,
    since   BIGINT NOT NULL,
    reason  TEXT   NOT NULL DEFAULT '',
    by_user TEXT   NOT NULL DEFAULT ''
);
