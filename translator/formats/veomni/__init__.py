"""VeOmni YAML (`model.* / data.* / train.*`), its two key layouts, and the HF config.json beside it.

Transitional re-export while the package gets its spec."""

from .fields import *  # noqa: F401,F403
from .options import is_option_file  # noqa: F401
from .reader import *  # noqa: F401,F403
from .writer import *  # noqa: F401,F403
