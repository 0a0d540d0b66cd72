"""The SDK's export pipeline (:mod:`.pipeline`) and its parts: the SDK's own spans (:mod:`.spans`), content
handling (:mod:`.content`), and one stage per kind of telemetry: spans (:mod:`.span_export`), metrics
(:mod:`.histograms`, :mod:`.metric_export`) and feedback (:mod:`.feedback_export`). Everything leaves through
:mod:`inferwatch.transport`."""
