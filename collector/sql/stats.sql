-- Counts behind `tracemill stats`. A model version is the first of agent version,
-- service version, response model and request model a span carries.
SELECT
    (SELECT count(*) FROM otlp_spans) AS spans,
    (SELECT count(*) FROM otlp_log_records) AS log_records,
    (SELECT count(DISTINCT trace_id) FROM otlp_spans) AS traces,
    (SELECT count(DISTINCT service_name) FROM otlp_spans) AS services,
    (SELECT count(DISTINCT agent_name) FROM otlp_spans) AS agents,
    (SELECT count(DISTINCT coalesce(agent_version, service_version, response_model, request_model))
       FROM otlp_spans) AS model_versions,
    (SELECT coalesce(sum(requests), 0) FROM collector_commits) AS requests,
    (SELECT coalesce(sum(rejected_items), 0) FROM collector_commits) AS rejected_items,
    (SELECT coalesce(sum(duplicate_items), 0) FROM collector_commits) AS duplicate_items,
    (SELECT min(start_time_unix_nano) FROM otlp_spans) AS first_span_unix_nano,
    (SELECT max(end_time_unix_nano) FROM otlp_spans) AS last_span_unix_nano;
