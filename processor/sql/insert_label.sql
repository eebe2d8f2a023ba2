INSERT INTO labels (target, passed, reward, kind, labeled_by, note, source_file,
                    created_unix_nano)
VALUES (?, ?, ?, ?, ?, ?, ?, ?);
