-- Per agent reply, the log probabilities of its tokens when the run asked for them
-- (`--logprobs`): a JSON list aligned with the assistant messages, null where not given.
ALTER TABLE rollouts ADD COLUMN logprobs JSON;
