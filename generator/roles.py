"""The parts that play a run's roles, built from their spec strings and closed together.

Agent, person, writer and judge are :class:`~generator.records.ChatBackend` s (or the
template person); the grader reads their conversations; the world answers the agent's
tool calls (:mod:`generator.worlds`). Nothing here reads the environment: model keys come
in as a mapping.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.backends import BackendOptions, build_backend
from generator.errors import BudgetError, GeneratorError
from generator.graders import Grader, build_grader
from generator.person import ModelPerson, PersonWriter
from generator.prices import PriceTable
from generator.records import ChatBackend
from generator.run_config import RunConfig, model_key, role_specs
from generator.simulate import is_free
from generator.template_person import TemplatePerson
from generator.worlds import WorldSource, build_worlds


class Roles:
    """The run's backends, grader and world source, closed together."""

    def __init__(self, config: RunConfig, credentials: Mapping[str, str],
                 options: BackendOptions) -> None:
        self.owned: list[ChatBackend] = []
        self.worlds: WorldSource = build_worlds(config.world)
        try:
            self._build(config, credentials, options)
        except BaseException:
            self.worlds.close()
            raise

    def _build(self, config: RunConfig, credentials: Mapping[str, str],
               options: BackendOptions) -> None:
        self.agent: ChatBackend = build_backend(config.agent, role="agent",
                                                credentials=credentials, options=options)
        self.owned.append(self.agent)
        self.person: PersonWriter
        if config.person == "template":
            self.person = TemplatePerson()
        else:
            backend = build_backend(config.person, role="person", credentials=credentials,
                                    options=options)
            self.owned.append(backend)
            self.person = ModelPerson(backend)
        self.writer: ChatBackend | None = None
        if config.writer:
            self.writer = build_backend(config.writer, role="writer",
                                        credentials=credentials, options=options)
            self.owned.append(self.writer)
        self.judge: ChatBackend | None = None
        if config.grader == "judge":
            if not config.judge:
                raise GeneratorError("--grader judge needs --judge MODEL_SPEC (the judge "
                                     "model, e.g. openai:gpt-4o-mini)")
            self.judge = build_backend(config.judge, role="judge", credentials=credentials,
                                       options=options)
            self.owned.append(self.judge)
        self.grader: Grader | None = build_grader(config.grader, judge_backend=self.judge,
                                                  rubric=config.rubric)

    async def aclose(self) -> None:
        """Close every backend and the world source."""
        try:
            for backend in self.owned:
                await backend.aclose()
        finally:
            self.worlds.close()


def check_prices(config: RunConfig, prices: PriceTable) -> None:
    """A money budget needs a price for every model that plays a role."""
    if config.budget.kind != "usd":
        return
    for role, spec in role_specs(config).items():
        if is_free(spec):
            continue
        model = model_key(spec) or spec
        if not prices.has(model):
            raise BudgetError(
                f"a money budget needs a price for every model: {role} model {model!r} has "
                "none; add it with --prices FILE ({\"" + model + "\": {\"input\": USD per 1M "
                "tokens, \"output\": ...}}) or give the budget in rollouts or tokens")


__all__ = ["Roles", "check_prices"]
