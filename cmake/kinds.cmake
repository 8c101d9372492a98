# The kind table: one row per cache kind. A kind is its folders (impls/KIND, oracle/models,
# properties/kinds/KIND with its CMakeLists.txt) plus its name here; everything else (the trace
# codec, the models, generators and properties, the fuzz targets, the port, the vectors and
# kvconform_add_suite) takes the kinds from this list through the generated kind_list.h.
set(KVCONFORM_KINDS flat ring paged beam growing prefix hybrid latent tiered recurrent radix)

# Writes kind_list.h (the X-macro) and adapters.h (every kind's concept and adapter) into DIR.
function(kvconform_generate_kind_table dir)
  set(KVCONFORM_KIND_ROWS "")
  set(KVCONFORM_KIND_ADAPTER_INCLUDES "")
  foreach(kind IN LISTS KVCONFORM_KINDS)
    string(APPEND KVCONFORM_KIND_ROWS " X(${kind})")
    string(APPEND KVCONFORM_KIND_ADAPTER_INCLUDES "#include \"properties/kinds/${kind}/adapter.h\"\n")
  endforeach()
  configure_file(${PROJECT_SOURCE_DIR}/properties/trace/kind_list.h.in ${dir}/properties/trace/kind_list.h @ONLY)
  configure_file(${PROJECT_SOURCE_DIR}/properties/kinds/adapters.h.in ${dir}/properties/kinds/adapters.h @ONLY)
endfunction()
