"""Optional NER (PERSON, LOCATION) through Presidio and an installed spaCy model: :class:`PresidioRedactor`
(``pip install 'inferwatch[presidio]'``). Presidio and spaCy are imported only when one is made."""

from __future__ import annotations

import logging
from typing import Any

from .conflicts import _remove_duplicates
from .findings import _R
from .redactor import Redactor
from .rules import ALL_ENTITIES, NER_ENTITIES
from .scan import _Scan

logger = logging.getLogger("inferwatch.redaction")


class PresidioRedactor(Redactor):
    """:class:`Redactor` plus PERSON and LOCATION from a spaCy NER model through Presidio's ``SpacyRecognizer``.

    Needs ``presidio-analyzer`` and an installed spaCy pipeline with an ``ner`` component (``model``: a package
    name or a path). When either is missing it still redacts everything else, says why in :attr:`reason` (and in a
    log warning), and :attr:`available` is False; its policy then equals the plain redactor's.
    """

    KNOWN_ENTITIES = ALL_ENTITIES | frozenset(NER_ENTITIES)
    _WORDS_HOLD_NOTHING = False  # a name is a word

    def __init__(self, model: str = "en_core_web_sm", **options: Any) -> None:
        super().__init__(**options)
        self.model = model
        self.available = False
        self.reason = ""
        self._analyzer: Any = None
        try:
            self._analyzer = _presidio_ner_analyzer(model)
        except _NerUnavailable as exc:
            self.reason = str(exc)
            logger.warning("PresidioRedactor: NER disabled (%s); redacting without PERSON/LOCATION", exc)
        else:
            self.available = True
            self.policy += f"+ner:{model.rstrip('/').rsplit('/', 1)[-1]}"

    def _finds_anything(self, text: str, wanted: frozenset[str], secrets: frozenset[str] | None = None) -> bool:
        if super()._finds_anything(text, wanted, secrets):
            return True
        ner_wanted = [e for e in NER_ENTITIES if e in wanted]  # a model's findings are not local: look again
        return bool(self.available and ner_wanted and self._analyzer.analyze(text=text, language="en",
                                                                             entities=ner_wanted))

    def _analyze(self, text: str, wanted: frozenset[str], scan: _Scan | None = None, *,
                 scores: bool = True) -> list[_R]:
        # always scored: the model's findings may overlap the patterns' (see redactor._overlapping)
        results = super()._analyze(text, wanted, scan)
        ner_wanted = [e for e in NER_ENTITIES if e in wanted]
        if not self.available or not text or not ner_wanted:
            return results
        found = self._analyzer.analyze(text=text, language="en", entities=ner_wanted)
        ner = [_R(r.entity_type, r.start, r.end, float(r.score), "ner") for r in found]
        if not ner:
            return results
        return _remove_duplicates(results + [r for r in ner if r.score >= self.score_threshold])


class _NerUnavailable(Exception):
    pass


def _presidio_ner_analyzer(model: str) -> Any:
    try:
        import spacy  # noqa: F401 - optional dependency
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider
    except ImportError as exc:
        raise _NerUnavailable(f"presidio-analyzer/spaCy not installed ({exc.name}); "
                              "pip install 'inferwatch[presidio]'") from None
    import importlib.util
    from pathlib import Path

    if not (Path(model).exists() or importlib.util.find_spec(model.replace("-", "_")) is not None):
        raise _NerUnavailable(f"spaCy model {model!r} is not installed (no package or directory of that name)")
    provider = NlpEngineProvider(nlp_configuration={
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": model}],
        "ner_model_configuration": {
            "model_to_presidio_entity_mapping": {"PER": "PERSON", "PERSON": "PERSON", "LOC": "LOCATION",
                                                 "LOCATION": "LOCATION", "GPE": "LOCATION", "FAC": "LOCATION"},
            "labels_to_ignore": ["ORG", "ORGANIZATION", "CARDINAL", "EVENT", "LANGUAGE", "LAW", "MONEY", "ORDINAL",
                                 "PERCENT", "PRODUCT", "QUANTITY", "WORK_OF_ART", "NORP", "DATE", "TIME"],
        },
    })  # fmt: skip
    try:
        engine = provider.create_engine()
    except Exception as exc:  # noqa: BLE001 - any loading failure means "no NER", never a crash
        raise _NerUnavailable(f"spaCy model {model!r} failed to load: {exc}") from None
    nlp = engine.nlp.get("en") if isinstance(getattr(engine, "nlp", None), dict) else None
    if nlp is not None and not any(nlp.get_pipe_meta(name).factory in ("ner", "beam_ner", "entity_ruler")
                                   for name in nlp.pipe_names):
        raise _NerUnavailable(f"spaCy model {model!r} has no entity recognizer ('ner' or 'entity_ruler')")
    return AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])
