#include "util/error.h"

namespace mobius {

void assert_failed(const char* expr, const char* file, int line, const std::string& msg) {
  throw InternalError(std::string("internal error: ") + msg + " (" + expr + " at " + file + ":" +
                      std::to_string(line) + ")");
}

}  // namespace mobius
