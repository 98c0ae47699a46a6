# semsim_embed_files(OUTPUT out.cpp NAMESPACE ns BASE dir FILES a.yaml b.yaml ...)
# Generates a C++ source defining `ns::embedded_files()`, a list of {relative path, contents},
# so that presets and default scenarios ship inside the executable.
function(semsim_embed_files)
  cmake_parse_arguments(ARG "" "OUTPUT;NAMESPACE;BASE" "FILES" ${ARGN})
  # A list would be split by the shell at its semicolons: pass it joined by '|'.
  string(REPLACE ";" "|" joined_files "${ARG_FILES}")
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ARG_OUTPUT} -DNAMESPACE=${ARG_NAMESPACE} -DBASE=${ARG_BASE}
            "-DFILES=${joined_files}" -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    COMMENT "Embedding ${ARG_NAMESPACE} files"
    VERBATIM)
  # Generated files stay out of unity batches: regenerating one must not recompile its neighbours.
  set_source_files_properties(${ARG_OUTPUT} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
