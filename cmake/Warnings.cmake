# Warnings as errors apply to our own targets only, never to third-party headers.
function(ic_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wimplicit-fallthrough
                                           # designated initializers leave the rest defaulted on purpose
                                           -Wno-missing-field-initializers)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # Clang only: the lock annotations of core/thread_annotations.hpp are checked, and no
    # conversion may silently change a value (sign and narrowing included).
    target_compile_options(${target} PRIVATE -Wthread-safety -Wconversion)
  endif()
endfunction()
