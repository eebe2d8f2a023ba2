-- A run keeps its whole plan (so a resumed run simulates what it planned, whatever new
-- spans did to the map since), and each rollout how often its agent calls were retried and
-- how many of its scheduled tool faults actually fired.
ALTER TABLE generation_runs ADD COLUMN plan_body JSON;
ALTER TABLE rollouts ADD COLUMN retries INTEGER DEFAULT 0;
ALTER TABLE rollouts ADD COLUMN faults_scheduled INTEGER DEFAULT 0;
ALTER TABLE rollouts ADD COLUMN faults_fired INTEGER DEFAULT 0;
