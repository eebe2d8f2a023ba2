-- The one place the six axes are listed (processor.axes.AXES names the same axes; a test
-- checks that the two agree): conversation_axes holds them as columns, and
-- conversation_coordinates one row per conversation and axis, (conversation_id, axis,
-- value). Pairs of coordinates come from a self-join of the coordinates, single
-- coordinates from the coordinates themselves. Temporary views, so every connection that
-- reads them (the processor, the planner) makes them from this file.
CREATE OR REPLACE TEMP VIEW conversation_axes AS
SELECT conversation_id, tool, tool_condition, world_state, history, user_stance, policy_rule
FROM conversations;

CREATE OR REPLACE TEMP VIEW conversation_coordinates AS
SELECT conversation_id, axis, value
FROM (
    UNPIVOT conversation_axes
    ON COLUMNS(* EXCLUDE (conversation_id))
    INTO NAME axis VALUE value
);
