-- Export rows (registered as export_rows, arguments and tools as JSON text) with tool-call
-- arguments and tools cast to JSON, so that Parquet carries them as JSON columns (Arrow's
-- JSON extension type) instead of structs whose fields Arrow would merge across rows.
SELECT rollout_id, run_id, side, situation, passed, reward, failure_class, labeled_by,
       list_transform(messages, lambda m: struct_pack(
           role := m.role, content := m.content, name := m.name,
           tool_call_id := m.tool_call_id,
           tool_calls := list_transform(m.tool_calls, lambda c: struct_pack(
               id := c.id, type := c.type,
               function := struct_pack(name := c.function.name,
                                       arguments := CAST(c.function.arguments AS JSON))))))
           AS messages,
       CAST(tools AS JSON) AS tools
FROM export_rows;
