-- An admin stopping gracefully first steps down: it keeps beating (its claimed fire times stay
-- its own while it dispatches them) but no longer takes a share of the jobs, so the other admins
-- pre-read its share from their next beat instead of after it has gone.
ALTER TABLE admin_node ADD COLUMN leaving INTEGER NOT NULL DEFAULT 0;
