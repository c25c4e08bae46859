# Turns a text file (a view's JS or CSS) into a C++ header holding it as a
# std::string_view, so pages are self-contained without files beside the binary.
#   cmake -DIN=<file> -DOUT=<header> -DNAME=<identifier> -P embed_text.cmake
file(READ ${IN} content)
string(FIND "${content}" ")aiprof_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )aiprof_embed\"")
endif()
file(WRITE ${OUT}.tmp "// Generated from ${IN} by cmake/embed_text.cmake; edit that file instead.\n"
  "#pragma once\n#include <string_view>\nnamespace aiprof::embedded {\n"
  "inline constexpr std::string_view ${NAME} = R\"aiprof_embed(${content})aiprof_embed\";\n}\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
