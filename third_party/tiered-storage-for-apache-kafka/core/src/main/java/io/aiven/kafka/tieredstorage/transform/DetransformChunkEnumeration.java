/*
 * Copyright 2023 Aiven Oy
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 * http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package io.aiven.kafka.tieredstorage.transform;

import java.util.Enumeration;

/**
 * The enumeration of chunks being de-transformed.
 *
 * <p>There are supposed to be multiple implementation doing different de-transformations
 * (like decompression and decryption).
 * These implementations are supposed to be composable.
 */
public interface DetransformChunkEnumeration extends Enumeration<byte[]> {
}
