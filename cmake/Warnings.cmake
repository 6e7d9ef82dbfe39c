# Warnings as errors apply to our own targets only, never to third-party headers.
function(ic_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wimplicit-fallthrough
                                           # designated initializers leave the rest defaulted on purpose
                                           -Wno-missing-field-initializers)
endfunction()
