-- A situation judged without the situations inside it (processor/situations.py,
-- "Supersets are judged without what they hold") names them, and each member says whether
-- it is its own: outside every one of them, among the conversations its status was decided
-- on. Rows stored before this migration have NULLs: read as no such situation, every
-- member its own.
ALTER TABLE situations ADD COLUMN judged_without VARCHAR;     -- JSON list of situation ids
ALTER TABLE situation_members ADD COLUMN own BOOLEAN;
