-- Executors cordoned for a drain: no new runs go to them (their running ones finish) until an
-- administrator lifts it. One row per address as given; matched without case or trailing slash.
CREATE TABLE executor_cordon (
    address VARCHAR(255) NOT NULL PRIMARY KEY,
    since   BIGINT       NOT NULL,
    reason  VARCHAR(512) NOT NULL DEFAULT '',
    by_user VARCHAR(64)  NOT NULL DEFAULT ''
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
