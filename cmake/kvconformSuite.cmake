# kvconform_add_suite: a gate runner for one cache type, with the matrix, reports, store, replay and exit codes.
#
#   kvconform_add_suite(<target> HEADER <file> TYPE <c++ type> KIND <kind> [NAME <short>] [PROFILE quick|deep])
#
# KIND is a row of the kind table (KVCONFORM_KINDS in kinds.cmake: flat, ring, paged, beam, growing,
# prefix, hybrid, latent). Builds <target> from a generated main that registers TYPE (which only has to satisfy
# kvconform::<kind>_cache, from <kvconform/plugin.h>) and runs the kvconform command line over it, and
# registers `<target> gate --profile PROFILE` with ctest (failing traces go to <target>-failures/ in the
# build folder).
set(_kvconform_suite_template "${CMAKE_CURRENT_LIST_DIR}/kvconform_suite.cpp.in")
include(${CMAKE_CURRENT_LIST_DIR}/kinds.cmake)

function(kvconform_add_suite target)
  cmake_parse_arguments(PARSE_ARGV 1 S "" "HEADER;TYPE;KIND;NAME;PROFILE" "")
  foreach(required HEADER TYPE KIND)
    if(NOT S_${required})
      message(FATAL_ERROR "kvconform_add_suite(${target}): ${required} is required")
    endif()
  endforeach()
  if(NOT S_NAME)
    set(S_NAME ${target})
  endif()
  if(NOT S_PROFILE)
    set(S_PROFILE quick)
  endif()
  list(FIND KVCONFORM_KINDS "${S_KIND}" at)
  if(at LESS 0 OR NOT S_PROFILE MATCHES "^(quick|deep)$")
    list(JOIN KVCONFORM_KINDS ", " kinds)
    message(FATAL_ERROR "kvconform_add_suite(${target}): KIND must be one of ${kinds} and PROFILE quick or deep")
  endif()
  set(KVCONFORM_SUITE_TARGET ${target})
  set(KVCONFORM_SUITE_HEADER ${S_HEADER})
  set(KVCONFORM_SUITE_TYPE ${S_TYPE})
  set(KVCONFORM_SUITE_KIND ${S_KIND})
  set(KVCONFORM_SUITE_NAME ${S_NAME})
  configure_file(${_kvconform_suite_template} ${CMAKE_CURRENT_BINARY_DIR}/${target}_suite.cpp @ONLY)
  add_executable(${target} ${CMAKE_CURRENT_BINARY_DIR}/${target}_suite.cpp)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE kvconform::cli)
  add_test(NAME ${target} COMMAND ${target} gate --profile ${S_PROFILE}
                                  --store ${CMAKE_CURRENT_BINARY_DIR}/${target}-failures
           --junit ${CMAKE_CURRENT_BINARY_DIR}/${target}-junit.xml)
endfunction()
