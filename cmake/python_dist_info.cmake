# The kvconform Python package's metadata for cmake --install (python/pyproject.toml says the same to pip): its name
# and version, and the entry point that makes pytest load the plugin.
file(WRITE ${PROJECT_BINARY_DIR}/python/METADATA "Metadata-Version: 2.1\nName: kvconform\nVersion: ${PROJECT_VERSION}\n"
                                                 "Requires-Dist: numpy\n")
file(WRITE ${PROJECT_BINARY_DIR}/python/entry_points.txt "[pytest11]\nkvconform = kvconform_port.pytest_plugin\n")
file(WRITE ${PROJECT_BINARY_DIR}/python/top_level.txt "kvconform_port\n")
file(WRITE ${PROJECT_BINARY_DIR}/python/INSTALLER "cmake\n")
