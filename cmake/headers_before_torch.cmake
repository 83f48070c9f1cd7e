# PyTorch's wheels ship copies of some header-only libraries in their include
# directory (fmt, nlohmann/json), at versions other than the ones spdlog and
# our code were built with. A file that includes LibTorch must still see ours:
# fmt's inline namespace and nlohmann's ABI tag differ between versions, so a
# mixed build fails to link (or links two copies). Where LibTorch ships one of
# them, a directory of links to ours goes first on every include path.
# (Where ours are in /usr/include the compiler would search it last, after
# LibTorch's, whatever the order of the targets; the links avoid that.)
set(tula_first "${CMAKE_BINARY_DIR}/include-before-torch")
file(REMOVE_RECURSE "${tula_first}")
set(tula_shadowed "")
foreach(pair "fmt|fmt::fmt" "nlohmann|nlohmann_json::nlohmann_json")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 dir)
  list(GET pair 1 target)
  set(torch_copy "")
  foreach(inc ${TORCH_INCLUDE_DIRS})
    if(IS_DIRECTORY "${inc}/${dir}")
      set(torch_copy "${inc}/${dir}")
    endif()
  endforeach()
  if(NOT torch_copy OR NOT TARGET ${target})
    continue()
  endif()
  file(REAL_PATH "${torch_copy}" torch_copy)
  get_target_property(ours ${target} INTERFACE_INCLUDE_DIRECTORIES)
  foreach(inc ${ours})
    if(NOT IS_DIRECTORY "${inc}/${dir}")
      continue()
    endif()
    file(REAL_PATH "${inc}/${dir}" our_copy)
    # One and the same directory (a system LibTorch beside system packages): nothing to order.
    if(NOT our_copy STREQUAL torch_copy AND NOT EXISTS "${tula_first}/${dir}")
      file(MAKE_DIRECTORY "${tula_first}")
      file(CREATE_LINK "${inc}/${dir}" "${tula_first}/${dir}" SYMBOLIC)
      list(APPEND tula_shadowed "${dir} (${inc}, not ${torch_copy})")
    endif()
  endforeach()
endforeach()
if(tula_shadowed)
  include_directories(BEFORE SYSTEM "${tula_first}")
  list(JOIN tula_shadowed "; " tula_shadowed)
  message(STATUS "tula: the LibTorch include path has other copies of these headers; ours go first: ${tula_shadowed}")
endif()
