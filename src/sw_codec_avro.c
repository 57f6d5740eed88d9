/* Avro codec: placeholder until the module lands (see include/stormwatch/sw_codec_avro.h). */
typedef int sw_codec_avro_placeholder_t;
