"""The file to hand to ``spark-submit`` (it wants a path, not ``-m``):

    spark-submit --master spark://HOST:7077 --deploy-mode client \\
        $(python -c 'import wormhole_analytics.submit as m; print(m.__file__)') \\
        report --store DIR --out DIR

Python applications on a standalone cluster run their driver in client
mode. The jobs use DataFrame operations only (no Python UDFs), so the
executors need Spark but not this package.
"""

import sys

from wormhole_analytics._cli import main

if __name__ == "__main__":
    sys.exit(main())
