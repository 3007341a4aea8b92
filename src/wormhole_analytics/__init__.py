"""Usage analytics: PySpark jobs over the servers' usage events (docs/analytics.md).

``python -m wormhole_analytics ingest|report|import`` (or the
``wormhole-analytics`` console script); see docs/analytics.md. The same
module runs unchanged under ``spark-submit --master ...``.
"""
