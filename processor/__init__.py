"""The processor: spans → conversations → situations → the failure map (not built yet)."""

__all__: list[str] = []
