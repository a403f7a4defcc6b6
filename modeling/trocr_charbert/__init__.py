from ..common.shared_code import use_shared_modules

use_shared_modules(__name__, __path__)
